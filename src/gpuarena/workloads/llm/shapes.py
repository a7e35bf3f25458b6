"""The decoder's shapes: ``LlamaConfig``, the published shapes and a Hugging Face config.json.

No torch here: analysis (the training plan, the serving model, the claim checks) reads these
shapes and flops.py's formulas without loading a tensor library; model.py builds the modules.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

from gpuarena.errors import UserError
from gpuarena.workloads.llm.flops import param_counts


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
    # Llama 2 (Touvron et al. 2023; huggingface.co/meta-llama/Llama-2-7b-hf, -13b-hf, -70b-hf config.json):
    # the models MLPerf Inference and TensorRT-LLM's reference tables serve; 4,096-token context.
    "llama2-7b": LlamaConfig(dim=4096, n_layers=32, n_heads=32, n_kv_heads=32, ffn_dim=11008, vocab_size=32000,
                             max_seq_len=4096, rope_theta=10000.0),
    "llama2-13b": LlamaConfig(dim=5120, n_layers=40, n_heads=40, n_kv_heads=40, ffn_dim=13824, vocab_size=32000,
                              max_seq_len=4096, rope_theta=10000.0),
    "llama2-70b": LlamaConfig(dim=8192, n_layers=80, n_heads=64, n_kv_heads=8, ffn_dim=28672, vocab_size=32000,
                              max_seq_len=4096, rope_theta=10000.0),
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

