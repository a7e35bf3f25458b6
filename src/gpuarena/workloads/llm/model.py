"""A Llama-style decoder in plain PyTorch, shared by llm-train and llm-serve.

RMSNorm, rotary position embeddings, grouped-query attention through SDPA and a
SwiGLU feed-forward block (the Llama 3 architecture; torchtitan's and gpt-fast's
models are the same shape).  Built from a config with random weights: speed does
not depend on weight values, and no hub is reachable.  ``config_from_hf`` reads a
Hugging Face ``config.json`` so a user can measure their own architecture.

Head counts are inferred from tensor shapes (``view(..., -1, head_dim)``) so the
same module runs under tensor parallelism, where each rank holds a slice of the
heads.  Attention takes an optional KV cache (cache.py: ``DynamicCache`` or the
preallocated ``StaticCache``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from gpuarena.errors import UserError


@dataclass(frozen=True)
class LlamaConfig:
    dim: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    ffn_dim: int
    vocab_size: int
    max_seq_len: int = 8192
    rope_theta: float = 500000.0
    norm_eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.dim // self.n_heads

    def validate(self) -> "LlamaConfig":
        for k, v in asdict(self).items():
            kind = float if k in ("rope_theta", "norm_eps") else int
            if isinstance(v, bool) or not isinstance(v, (int, float) if kind is float else int):
                raise UserError(f"LLM config: {k}={v!r} must be {'a number' if kind is float else 'an integer'}")
            if not (math.isfinite(v) and v > 0 and (v >= 1e-300 if kind is float else True)):
                raise UserError(f"LLM config: {k}={v!r} must be a positive finite number")
            if v > _LIMITS.get(k, 1 << 20):
                raise UserError(f"LLM config: {k}={v:g} is beyond any decoder ({_LIMITS.get(k, 1 << 20):g} at most)")
        if self.dim % self.n_heads:
            raise UserError(f"LLM config: dim={self.dim} is not a multiple of n_heads={self.n_heads}")
        if self.n_heads % self.n_kv_heads:
            raise UserError(f"LLM config: n_heads={self.n_heads} is not a multiple of n_kv_heads={self.n_kv_heads}")
        if param_counts(self)[0] > MAX_PARAMS:
            raise UserError(f"LLM config: {param_counts(self)[0]:.3g} parameters, beyond any decoder "
                            f"({MAX_PARAMS:g} at most)")
        return self


# Bounds from published decoders, with a wide margin: hidden sizes and FFN widths reach ~5e4 (GPT-3:
# 12288, Llama 3 405B: 16384 and 53248), depth 126, vocabularies 2.6e5, contexts 1e7 tokens; models
# 1e12 parameters.  A config past these is a typo (10**100), refused before it is built.
_LIMITS = {"n_layers": 10_000, "vocab_size": 1 << 24, "max_seq_len": 1 << 26, "rope_theta": 1e12,
           "norm_eps": 1.0}
MAX_PARAMS = 1e14


# Published shapes.  llama-1b: the 1B shape (Llama-2-style vocabulary).
# llama3-8b / llama3-70b: Meta's config.json (huggingface.co/meta-llama/Meta-Llama-3-8B, -70B).
# gpt3-175b: GPT-3's 96 x 12288 with 96 heads (Brown et al. 2020, table 2.1) as a Llama-style
# block; a SwiGLU FFN of 32768 (8/3 x hidden, three matrices) keeps GPT-3's 8 h^2 parameters per
# layer, so parameter count and FLOPs per token match GPT-3's 175B within 1%.
SHAPES: dict[str, LlamaConfig] = {
    "tiny": LlamaConfig(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=128, vocab_size=256,
                        max_seq_len=256),
    "llama-1b": LlamaConfig(dim=2048, n_layers=16, n_heads=16, n_kv_heads=8, ffn_dim=8192, vocab_size=32000),
    "llama3-8b": LlamaConfig(dim=4096, n_layers=32, n_heads=32, n_kv_heads=8, ffn_dim=14336,
                             vocab_size=128256),
    "llama3-70b": LlamaConfig(dim=8192, n_layers=80, n_heads=64, n_kv_heads=8, ffn_dim=28672,
                              vocab_size=128256),
    "gpt3-175b": LlamaConfig(dim=12288, n_layers=96, n_heads=96, n_kv_heads=96, ffn_dim=32768,
                             vocab_size=50257, max_seq_len=2048),
}

_HF_KEYS = {"dim": "hidden_size", "n_layers": "num_hidden_layers", "n_heads": "num_attention_heads",
            "ffn_dim": "intermediate_size", "vocab_size": "vocab_size"}
MAX_CONFIG_BYTES = 1 << 20


def config_from_hf(path: str) -> LlamaConfig:
    """A Hugging Face ``config.json`` (Llama, Mistral, Qwen2 ... decoders) as a LlamaConfig."""
    from gpuarena.safeio import read_json

    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    raw = read_json(str(p), f"hf_config {path}", MAX_CONFIG_BYTES)   # a regular file, bounded by reading
    if not isinstance(raw, dict):
        raise UserError(f"hf_config {path}: not a JSON object")
    missing = [hf for hf in _HF_KEYS.values() if not isinstance(raw.get(hf), int) or isinstance(raw.get(hf), bool)]
    if missing:
        raise UserError(f"hf_config {path}: needs integer {', '.join(missing)}")
    kw = {ours: raw[hf] for ours, hf in _HF_KEYS.items()}
    optional = (("n_kv_heads", "num_key_value_heads"), ("max_seq_len", "max_position_embeddings"),
                ("rope_theta", "rope_theta"), ("norm_eps", "rms_norm_eps"))
    for ours, hf in optional:      # present means typed: "2", true or NaN is refused, never guessed
        if raw.get(hf) is not None:
            kw[ours] = raw[hf]
    kw.setdefault("n_kv_heads", kw["n_heads"])
    try:
        return LlamaConfig(**kw).validate()
    except UserError as exc:        # in the file's own words: num_key_value_heads, not n_kv_heads
        msg = str(exc).removeprefix("LLM config: ")
        for ours, hf in (*_HF_KEYS.items(), *optional):
            msg = msg.replace(f"{ours}=", f"{hf}=")
        raise UserError(f"hf_config {path}: {msg}") from None


def resolve_shape(shape: str, hf_config: str = "") -> LlamaConfig:
    """The config a workload's ``shape``/``hf_config`` parameters name."""
    if hf_config:
        return config_from_hf(hf_config)
    if shape not in SHAPES:
        raise UserError(f"unknown LLM shape {shape!r}; known: {', '.join(SHAPES)}")
    return SHAPES[shape]


def param_counts(cfg: LlamaConfig) -> tuple[int, int]:
    """(all parameters, all but the input embedding table).  The output head is a matmul and
    counts as compute; the embedding is a lookup (torchtitan's convention)."""
    kv = cfg.n_kv_heads * cfg.head_dim
    per_layer = 2 * cfg.dim * cfg.dim + 2 * cfg.dim * kv + 3 * cfg.dim * cfg.ffn_dim + 2 * cfg.dim
    embedding = cfg.vocab_size * cfg.dim
    total = embedding + cfg.n_layers * per_layer + cfg.dim + cfg.vocab_size * cfg.dim
    return total, total - embedding


def flops_per_token(cfg: LlamaConfig, seq_len: int, training: bool) -> float:
    """Model FLOPs per token: 6 N + 12 L H T for a training step, 2 N + 4 L H T forward only
    (N = parameters without the embedding table; attention counted without causal halving, as
    PaLM's MFU definition and torchtitan do).  Recomputation under checkpointing is not counted:
    MFU is model FLOPs, not hardware FLOPs."""
    _, n = param_counts(cfg)
    per = 3 if training else 1
    return float(per * (2 * n + 4 * cfg.n_layers * cfg.dim * seq_len))


def kv_cache_bytes(cfg: LlamaConfig, batch: int, context: int, bytes_per_value: int = 2) -> int:
    """Bytes of keys and values for ``batch`` sequences of ``context`` tokens."""
    return 2 * cfg.n_layers * batch * context * cfg.n_kv_heads * cfg.head_dim * bytes_per_value


def decode_bytes_per_step(cfg: LlamaConfig, batch: int, context: int, weight_bytes: float = 2,
                          kv_bytes: int = 2) -> float:
    """Bytes one decode step must read from memory: every weight but the embedding table (a
    lookup of ``batch`` rows) once, plus the keys and values of ``context`` tokens of each
    sequence.  Activations are ignored (kilobytes per sequence).  ``weight_bytes`` per parameter:
    2 for bf16, about 1 for FP8 weights."""
    _, n = param_counts(cfg)
    return n * weight_bytes + batch * cfg.dim * weight_bytes + kv_cache_bytes(cfg, batch, context, kv_bytes)


# --- modules ----------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rope_tables(cfg: LlamaConfig, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of every position and frequency, [max_seq_len, head_dim / 2], FP32."""
    hd = cfg.head_dim
    inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd))
    angles = torch.outer(torch.arange(cfg.max_seq_len, device=device, dtype=torch.float32), inv)
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin):
    """Rotate pairs (x[2i], x[2i+1]) of [B, T, heads, hd] by the angles of positions [T, hd/2]."""
    xf = x.float().unflatten(-1, (-1, 2))
    a, b = xf[..., 0], xf[..., 1]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2).type_as(x)


def _sdpa_gqa(q, k, v, is_causal: bool, mask=None):
    """SDPA over [B, heads, T, hd] with fewer KV heads than query heads, without copying K/V."""
    rep = q.shape[1] // k.shape[1]
    if rep == 1:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)
    if q.shape[2] == 1 and not is_causal:
        # One query token: fold each group's query heads into the query-length axis, so every KV
        # head is read once (decode is bound by these reads).
        b, h, _, d = q.shape
        out = F.scaled_dot_product_attention(q.view(b, k.shape[1], rep, d), k, v, attn_mask=mask)
        return out.reshape(b, h, 1, d)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal, enable_gqa=True)


class Attention(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.head_dim = cfg.head_dim
        kv = cfg.n_kv_heads * cfg.head_dim
        self.wq = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.wk = nn.Linear(cfg.dim, kv, bias=False)
        self.wv = nn.Linear(cfg.dim, kv, bias=False)
        self.wo = nn.Linear(cfg.dim, cfg.dim, bias=False)

    def qkv(self, x):
        """The query, key and value projections (llm/engine.py fuses them into one matmul)."""
        return self.wq(x), self.wk(x), self.wv(x)

    def forward(self, x, cos, sin, cache=None, layer: int = 0, pos=None):
        b, t, _ = x.shape
        xq, xk, xv = self.qkv(x)
        q = apply_rope(xq.view(b, t, -1, self.head_dim), cos, sin).transpose(1, 2)
        k = apply_rope(xk.view(b, t, -1, self.head_dim), cos, sin).transpose(1, 2)
        v = xv.view(b, t, -1, self.head_dim).transpose(1, 2)
        if pos is None:
            # training, or a prefill from position 0: attend within the new tokens (flash-eligible)
            if cache is not None:
                cache.write(layer, k, v)
            out = _sdpa_gqa(q, k, v, is_causal=True)   # at one token, causal is no mask (a constant, for dynamic lengths)
        else:
            keys, values, mask = cache.update(layer, pos, k, v)
            out = self.decode_attend(q, keys, values, mask)
        return self.wo(out.transpose(1, 2).reshape(b, t, -1))

    def decode_attend(self, q, keys, values, mask):
        """The new tokens' attention over the cache (llm/engine.py can put another in its place)."""
        return _sdpa_gqa(q, keys, values, is_causal=False, mask=mask)


class FeedForward(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.w1 = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)   # gate
        self.w3 = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)   # up
        self.w2 = nn.Linear(cfg.ffn_dim, cfg.dim, bias=False)   # down

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.attention_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.attention = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.feed_forward = FeedForward(cfg)

    def forward(self, x, cos, sin, cache=None, layer: int = 0, pos=None):
        x = x + self.attention(self.attention_norm(x), cos, sin, cache, layer, pos)
        return x + self.feed_forward(self.ffn_norm(x))


class Llama(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_embeddings = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.output = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        cos, sin = rope_tables(cfg)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    @torch.no_grad()
    def init_weights(self, std: float = 0.02) -> None:
        """Random weights (also after ``to_empty`` from the meta device, as FSDP2 builds do)."""
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=std)
            elif isinstance(m, RMSNorm):
                nn.init.ones_(m.weight)
        # residual projections scaled down with depth (GPT-2's init), keeps a random model's loss finite
        for blk in self.layers:
            for w in (blk.attention.wo.weight, blk.feed_forward.w2.weight):
                nn.init.normal_(w, std=std / math.sqrt(2 * self.cfg.n_layers))
        cos, sin = rope_tables(self.cfg, device=self.rope_cos.device)
        self.rope_cos.copy_(cos)
        self.rope_sin.copy_(sin)

    def forward(self, tokens, cache=None, pos=None, last_only: bool = False):
        """Logits for ``tokens`` [B, T].  ``pos`` None: positions 0..T-1 (training, or a prefill
        that fills ``cache``); else a [T] tensor of positions after the cached ones (decode).
        ``last_only``: logits of the last position only (a serving prefill needs no more; the
        [B, T, vocab] logits of a long prompt would cost gigabytes)."""
        t = tokens.shape[1]
        if pos is None:
            cos, sin = self.rope_cos[:t], self.rope_sin[:t]
        else:
            cos, sin = self.rope_cos.index_select(0, pos), self.rope_sin.index_select(0, pos)
        h = self.tok_embeddings(tokens)
        for i, layer in enumerate(self.layers):
            h = layer(h, cos, sin, cache, i, pos)
        if last_only:
            h = h[:, -1:]
        return self.output(self.norm(h))


def build(cfg: LlamaConfig, device, dtype=None, meta: bool = False) -> Llama:
    """A model with random weights on ``device``; ``meta`` leaves it unmaterialised for sharding."""
    if meta:
        with torch.device("meta"):
            return Llama(cfg)
    with torch.device(device):
        model = Llama(cfg)
    model.init_weights()
    return model.to(dtype=dtype) if dtype is not None else model


def step_config(cfg: LlamaConfig, **changes) -> LlamaConfig:
    return replace(cfg, **changes).validate()
