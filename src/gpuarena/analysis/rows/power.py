"""Power-limited clocks: the compute rate a card sustains under its own power limit.

A datasheet peak is the SM count x the boost clock x the work per clock.  NVIDIA quotes the A100
PCIe (250 W, 300 W for the 80 GB card) at the SXM4's boost clock and peaks (312 TFLOP/s FP16) although
the SXM4 runs that configuration at 400 W: under a sustained dense load the PCIe card cannot hold the
clock its peak is quoted at.  Lambda's same-recipe, same-batch DLE PyTorch runs show it: the A100
40GB PCIe at 0.88-0.91 of the 40GB SXM4 on BERT-Large fine-tuning and 0.95-0.96 on ResNet-50
(data/published_results.csv).

The model, per card g:

    sustained fraction s(g) = min(1, (TDP(g) / W(g)) ** CLOCK_POWER_EXPONENT)

W(g): the power the card's configuration is rated to run at its quoted clock, the highest TDP in
the catalog among cards of the same architecture, SM count and deep-learning peaks (the A100 PCIe's
is the A100 SXM4's 400 W; the H100 PCIe, quoted at its own lower clock and 114 SMs, is its own: 1).
The exponent: dynamic power goes as f x V^2, and V follows f across the clock range a power cap moves
through, so f goes as P^(1/3).  The sustained peak s(g) x P(g) sets the compute time of the roofline's
attainment and of the projection; the datasheet peak still bounds what is *impossible* (a burst runs
at the boost clock).  The memory term is left alone: HBM's clock does not follow the SM clock.
"""

from __future__ import annotations

import functools

from gpuarena.data import catalog

CLOCK_POWER_EXPONENT = 1 / 3


def _dl_peaks(g: catalog.GPU) -> tuple:
    return tuple(sorted((k, v) for k, v in g.peaks.items() if k != "fp64"))


def rated_power(g: catalog.GPU) -> float | None:
    """W(g): the highest TDP among catalog cards of g's architecture, SM count and deep-learning peaks."""
    return _rated(g.architecture, g.sm_count, _dl_peaks(g), g.tdp_w) if g.tdp_w else None


@functools.lru_cache(maxsize=256)    # a projection asks per point of every fit: once per configuration
def _rated(architecture: str, sm_count: int | None, peaks: tuple, tdp_w: float) -> float:
    same = [h.tdp_w for h in catalog.load() if h.tdp_w and h.architecture == architecture
            and h.sm_count == sm_count and _dl_peaks(h) == peaks]
    return max([tdp_w, *same])


def sustained_fraction(g: catalog.GPU) -> float:
    """s(g): the share of its quoted clock the card holds under a sustained dense load at its power limit."""
    w = rated_power(g)
    if not w or not g.tdp_w or g.tdp_w >= w:
        return 1.0
    return (g.tdp_w / w) ** CLOCK_POWER_EXPONENT


def sustained_peak(g: catalog.GPU, precision: str) -> float | None:
    """The dense peak at ``precision`` (catalog name) the card sustains under its power limit."""
    peak = g.peaks.get(precision)
    return peak * sustained_fraction(g) if peak else None


def why(g: catalog.GPU) -> str:
    """One phrase for a reason text; "" when the card holds its quoted clock."""
    s = sustained_fraction(g)
    if s >= 1:
        return ""
    return (f"{s:.0%} of peak: its {g.tdp_w:g} W power limit holds {s:.0%} of the clock its peak is quoted at, "
            f"which {rated_power(g):g} W cards of the same silicon hold")
