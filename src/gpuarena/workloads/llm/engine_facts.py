"""The serving engine's facts (torch-free): what llm-serve's spec says of its gemv kernel and the
rule its prefill param adds, without importing the engine (engine.py, gemv.py)."""

from __future__ import annotations

from gpuarena.errors import UserError

NARROW = 8192      # the most output rows a matrix may have for ``OneRowLinear`` to take its product
GEMV_DESCRIPTION = (f"one-row products of matrices with <= {NARROW} outputs through gpuarena's Triton matrix-vector "
               "kernel (llm/gemv.py; the RMSNorm before the QKV projection folded into it), wider ones through "
               "inductor's reduction")


def require_compile(prefill: str, variants) -> None:
    """llm-serve's ``prefill=compile`` and ``prefill=graph`` compile the prefill of a compiled engine: refused
    without the ``compile`` variant, which an engine that compiles nothing would run eager."""
    if prefill in ("compile", "graph") and "compile" not in variants:
        raise UserError(f"llm-serve [{'+'.join(sorted(variants))}]: prefill={prefill} compiles the prefill of the "
                        "compile variant's engine: add compile (or leave prefill at auto)")
