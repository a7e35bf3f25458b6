"""The bytes a weight moves at each serving precision: one table for llm-serve's recipes and for
analysis (the serving model behind check, advise and the report).

No torch here, like shapes.py and flops.py: analysis imports it without loading a tensor library.

- ``bf16``/``fp16``: 2 bytes a weight.
- ``fp8``: 1 byte a weight (e4m3) + one scale per output channel (a float32 is assumed: 4 bytes a
  channel, 0.1% of a 4096-wide row).
- ``int8``: 1 byte a weight + one scale per output channel in the model's dtype (weight_only.py's
  ``Int8WeightOnlyLinear``: 2 bytes a channel).
- ``int4``: half a byte a weight + a scale and a zero point in the model's dtype per group of
  ``group`` weights along the input (weight_only.py's ``Int4WeightOnlyLinear``: 4 bytes a group,
  0.03 byte a weight at groups of 128); a layer whose shape tinygemm cannot take stays in its dtype.

Weight-only int8 and int4 dequantise inside the matmul: their arithmetic runs in bf16 (``COMPUTE``).
The RMSNorm weights and the embedding table stay in the model's dtype (a lookup of one row a token).
"""

from __future__ import annotations

from gpuarena.workloads.llm.flops import param_counts

SERVING_PRECISIONS = ("bf16", "fp16", "fp8", "int8", "int4")
# the precision of the arithmetic, whose peak bounds a compute-bound step
COMPUTE = {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8", "int8": "bf16", "int4": "bf16"}
# llm-serve's weight variants (workloads/llm/serve.py) and the precision of the weights they store
VARIANT_PRECISION = {"fp8-weights": "fp8", "int8-weights": "int8", "int4-weights": "int4"}
# what a claim or a flag may say for each precision
ALIASES = {"bfloat16": "bf16", "amp-bf16": "bf16", "float16": "fp16", "half": "fp16", "amp-fp16": "fp16",
           **VARIANT_PRECISION}
SCALE_BYTES = {"fp8": 4, "int8": 2}       # one scale per output channel
INT4_GROUPS = (128, 64, 32)               # the group sizes tried, largest first (along the input)
INT4_GROUP_BYTES = 4                      # a 2-byte scale and a 2-byte zero point per group
DTYPE_BYTES = 2                           # bf16 / fp16: weights left unquantised, norms, the embedding


def int4_layout(in_features: int, out_features: int) -> tuple[int, int] | None:
    """(group size, inner k tiles) for tinygemm, or None when the layer does not fit it: the
    input dimension a multiple of the group size and of 16 x the inner k tiles, the output of 8."""
    if out_features % 8:
        return None
    group = next((g for g in INT4_GROUPS if in_features % g == 0), None)
    tiles = next((t for t in (8, 4, 2) if in_features % (16 * t) == 0), None)
    return (group, tiles) if group and tiles else None


def normalise(precision: str) -> str | None:
    """The serving precision a name stands for (``int4-weights`` -> ``int4``), or None."""
    key = str(precision).strip().lower()
    key = ALIASES.get(key, key)
    return key if key in SERVING_PRECISIONS else None


def of_variant(variant: str | None, stored: str | None = None) -> str:
    """The weights' precision of an llm-serve result: its weight variant's, else the precision it
    stored (``bf16`` for int8/int4 weights, whose arithmetic is bf16)."""
    parts = set((variant or "").split("+"))
    named = [p for v, p in VARIANT_PRECISION.items() if v in parts]
    return named[0] if named else (stored or "bf16")


def linear_bytes(in_features: int, out_features: int, precision: str) -> float:
    """Bytes of one linear layer's weight (and its scales) at ``precision``."""
    n = in_features * out_features
    if precision in SCALE_BYTES:
        return n + out_features * SCALE_BYTES[precision]
    if precision == "int4" and (layout := int4_layout(in_features, out_features)):
        return n / 2 + out_features * (in_features // layout[0]) * INT4_GROUP_BYTES
    return float(n * DTYPE_BYTES)


def linear_shapes(cfg) -> list[tuple[int, int, int]]:
    """(in, out, how many) of the decoder's linear layers: per block the Q, K, V and output
    projections and the SwiGLU's three; then the output head.  Fused projections (wqkv, w13) have
    the same inputs and the concatenated outputs, so the same bytes."""
    kv = cfg.n_kv_heads * cfg.head_dim
    L = cfg.n_layers
    return [(cfg.dim, cfg.dim, 2 * L), (cfg.dim, kv, 2 * L), (cfg.dim, cfg.ffn_dim, 2 * L), (cfg.ffn_dim, cfg.dim, L),
            (cfg.dim, cfg.vocab_size, 1)]


def dense_bytes(cfg, precision: str) -> float:
    """Bytes of every weight but the embedding table (flops.param_counts' dense parameters): the
    linear layers at ``precision``, the RMSNorm weights in the model's dtype."""
    norms = (2 * cfg.n_layers + 1) * cfg.dim * DTYPE_BYTES
    return norms + sum(k * linear_bytes(i, o, precision) for i, o, k in linear_shapes(cfg))


def bytes_per_weight(cfg, precision: str) -> float:
    """The mean bytes a dense parameter takes at ``precision`` (2 for bf16; ~1.0 for int8;
    ~0.53 for int4 at groups of 128)."""
    return dense_bytes(cfg, precision) / param_counts(cfg)[1]
