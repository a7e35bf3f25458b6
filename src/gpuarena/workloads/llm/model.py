"""A Llama-style decoder in plain PyTorch, shared by llm-train and llm-serve.

RMSNorm, rotary position embeddings, grouped-query attention through SDPA and a
SwiGLU feed-forward block (the Llama 3 architecture; torchtitan's and gpt-fast's
models are the same shape).  Built from a config (shapes.py: the published shapes, or a
user's Hugging Face ``config.json``) with random weights: speed does not depend on weight
values, and no hub is reachable.  The FLOP and byte formulas are flops.py's.

Head counts are inferred from tensor shapes (``view(..., -1, head_dim)``) so the
same module runs under tensor parallelism, where each rank holds a slice of the
heads.  Attention takes an optional KV cache (cache.py: ``DynamicCache`` or the
preallocated ``StaticCache``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from gpuarena.workloads.llm.shapes import LlamaConfig

# --- modules ----------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)


def rms_norm(x, weight, eps: float):
    """``x`` over the root mean square of its last dimension (in FP32), back in its dtype, times ``weight``."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).type_as(x) * weight


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
            # at one token, causal is no mask (a constant, for dynamic lengths)
            out = _sdpa_gqa(q, k, v, is_causal=True)
        else:
            keys, values, mask = cache.update(layer, pos, k, v)
            out = self.decode_attend(q, keys, values, mask, pos)
        return self.wo(out.transpose(1, 2).reshape(b, t, -1))

    def decode_attend(self, q, keys, values, mask, pos):
        """The new tokens' attention over the cache (llm/engine.py can put another in its place);
        ``mask`` says which cache positions are live, ``pos`` is the new tokens' positions."""
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
