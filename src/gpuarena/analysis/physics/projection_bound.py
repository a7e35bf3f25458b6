"""What a projection sits on, where it is an upper bound rather than a figure (issue 39: the B200 printed at
exactly the BF16 peak ratio to the H200 for BERT inference, SD, ResNet-50 inference and llm-train alike).

Two cases: capped at the highest figure the evidence supports on the card (physics.Limit.highest: a
ceiling of its generation, one borrowed from another, or its peak), or on the compute-peak ratio to its
reference, where the projection's time is all compute term (a/P of analysis/physics/projection.py): the
reference's share of its peak carried whole to a larger one, the best case.  advise marks both, and the
report prints them with their band and "upper bound".
"""

from __future__ import annotations

from gpuarena.analysis.rows import precision as P
from gpuarena.analysis.physics import projection as J
from gpuarena.data import catalog

# A projection whose compute term takes at least this share of its time sits on the compute-peak ratio.
PEAK_RATIO_SHARE = 0.98


def compute_share(abc: tuple[float, float, float], g: catalog.GPU, workload: str, request: str) -> float | None:
    """The share of g's projected time the compute term a/P takes."""
    total, compute = J.predict(abc, g, workload, request), J.predict((abc[0], 0.0, 0.0), g, workload, request)
    return total / compute if total and compute else None


def bounded(thr: float, lim, abc: tuple[float, float, float], g: catalog.GPU, workload: str,
            request: str) -> tuple[float, str | None]:
    """(the projection, what it sits on where it is an upper bound, else None): capped just under the highest
    figure the evidence supports (check judges a figure at it by rounding), or on the compute-peak ratio."""
    top = lim.highest * (1 - 1e-9)
    if thr > top:
        b = lim.binding or lim.borrowed
        return top, ("its peak" if b is None else f"its {b.side} ceiling" if lim.binding else
                     f"the {b.side} ceiling of {b.ceiling.best.generation.capitalize()}, no "
                     f"{P.arch_of(g).capitalize()} evidence")
    share = compute_share(abc, g, workload, request) or 0.0
    return thr, "the compute-peak ratio" if share >= PEAK_RATIO_SHARE else None
