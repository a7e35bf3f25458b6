"""The engine class a figure ran on: the one rule compare, advise, expected, cost, the frontier, the
endpoints' table, the credible shares and the report's first screen class figures by (figures of two
classes are not compared).

- a published figure: the class its software names (analysis/rows/published.py ``engine_class``, stored in
  ``extra.engine`` when it is imported);
- an endpoint measured over HTTP: the server's engine (``extra.engine``);
- a measured PyTorch result, by its variant: ``tensorrt`` runs the engine torch_tensorrt builds (TensorRT);
  ``compile`` and ``compile-max-autotune`` (torch.compile in any mode) and ``aot-inductor`` (Inductor's
  kernels, compiled ahead of time) run compiled code (PyTorch compiled); every other recipe runs eagerly.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuarena.analysis.rows.published import COMPILED, EAGER, TENSORRT, engine_class
from gpuarena.store.result import Result

COMPILED_VARIANTS = ("aot-inductor",)   # besides every variant named compile or compile-<mode>


def engine_of_variants(variants: Iterable[str]) -> str:
    """The engine class of a measured recipe, from its variant names."""
    names = set(variants)
    if "tensorrt" in names:
        return TENSORRT
    if any(v == "compile" or v.startswith("compile-") or v in COMPILED_VARIANTS for v in names):
        return COMPILED
    return EAGER


def engine_of(r: Result) -> str:
    """The engine class a result ran on (see the module docstring)."""
    if r.source == "published":
        return r.extra.engine or (engine_class(r.extra.software) if r.extra.software else "as published")
    if r.extra.engine:   # endpoint-serve: the server's engine and version
        return r.extra.engine
    return engine_of_variants(r.variant.split("+"))
