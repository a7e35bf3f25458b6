"""Figures derived from several stored results, computed when results are read.

A record holds what its run measured; a figure that depends on other records -- the
share of the best matmul measured on the device (ceiling.py), the scaling efficiency
against the 1-rank result of the run (scaling.py) -- is computed here from the results
at hand, so it never depends on which records happened to exist when it was written.
"""

from __future__ import annotations

from gpuarena.analysis import ceiling, scaling

def with_derived(rows: list[dict], pool: list[dict] | None = None) -> list[dict]:
    """Copies of ``rows`` whose extra carries the derived figures against ``pool`` (default:
    the rows themselves).  Records written before figures were derived on read carry frozen
    ones: those are replaced where the pool can recompute them, and kept where it cannot (a
    bundle exported without the matmul its ceiling came from)."""
    pool = rows if pool is None else pool
    index = ceiling.best_matmuls(pool)            # one pass over the pool, not one per row
    bases = scaling.baselines(pool)
    out = []
    for r in rows:
        extra = dict(r.get("extra") or {})
        extra.update(ceiling.figures(pool, r, index))
        extra.update(scaling.figures_for(pool, r, bases))
        out.append(dict(r, extra=extra))
    return out
