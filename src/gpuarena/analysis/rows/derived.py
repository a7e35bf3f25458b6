"""Figures derived from several stored results, computed when results are read.

A record holds what its run measured; a figure that depends on other records -- the
share of the best matmul measured on the device (ceiling.py), the scaling efficiency
against the 1-rank result of the run (scaling.py) -- is computed here from the results
at hand, so it never depends on which records happened to exist when it was written.
"""

from __future__ import annotations

from gpuarena.analysis.rows import ceiling, scaling
from gpuarena.analysis.rows import precision as P
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.store.result import Result

def with_derived(rows: list[Result], pool: list[Result] | None = None) -> list[Result]:
    """``rows`` with their derived figures (Result.derived) against ``pool`` (default: the
    rows themselves).  Records written before figures were derived on read carry frozen
    ones in extra: those are replaced where the pool can recompute them, and kept where it
    cannot (a bundle exported without the matmul its ceiling came from)."""
    pool = rows if pool is None else pool
    index = ceiling.best_matmuls(pool)            # one pass over the pool, not one per row
    bases = scaling.baselines(pool)
    out = []
    for r in rows:
        stored = r.extra.model_dump(include=_FROZEN, exclude_none=True)
        figures = {**stored, **ceiling.figures(pool, r, index), **scaling.figures_for(pool, r, bases)}
        out.append(r.with_derived(**figures) if figures else r)
    return out


def share_of_peak(r: Result) -> float | None:
    """Achieved TFLOP/s per GPU over the catalog's dense peak at the precision the recipe executed,
    the rule the claim check uses (physics.roof): PyTorch's default precision runs ResNet-50's
    convolutions at TF32 on Ampere and newer, so its share is of the TF32 peak, not of FP32's.
    None without a FLOP rate, a catalog card, or a peak at that precision."""
    g = catalog.find(r.device_name or "") if r.tflops else None
    if g is None:
        return None
    try:
        request = P.request_of_variants(frozenset(r.variant.split("+")), r.precision)
        peak = g.peak(P.peak_precision(r.workload, request, P.arch_of(g)))
    except (UserError, KeyError, ValueError):   # a precision or architecture gpuarena has no peak for
        return None
    return r.tflops / r.gpus / peak if peak else None


# figures older records stored in extra, kept where the pool cannot recompute them
_FROZEN = {"share_of_ceiling", "ceiling", "scaling_efficiency", "scaling_baseline_id", "scaling_n",
           "scaling_efficiency_ci95"}
