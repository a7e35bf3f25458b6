"""One physics behind every decision: the roofline that check, advise, compare and the report ask.

Per item of a workload on GPU g:

    roofline time = max(F / P(g), B / BW(g))

F: FLOPs per item (the workload class's ``flops``); P(g): the catalog's dense peak at the
precision the arithmetic executes as on g's generation (analysis.precision); B: the estimated
DRAM traffic per item (the workload class's ``bytes_per_item``; None: compute alone bounds
it); BW(g): the catalog's memory bandwidth.  The compute time of a card that cannot hold its
quoted clock under its power limit runs at the peak it sustains (analysis/power.py: an A100
PCIe at 250 W against the SXM4's 400 W at one peak), so a figure credible on the SXM4 is not
credible on the PCIe card where compute bounds it.

A throughput's *attainment* is roofline time x throughput: 1.0 is on the roof.  Two bounds
follow, and every verb uses them:

- **impossible**: F x throughput above P(g): above the peak of the executed precision, no
  estimate involved;
- **implausible**: attainment above the best credibly reached on the same workload and the
  same precision class (BF16 and FP16 are one class: the same tensor cores at the same rate),
  on the same architecture generation, widened by the spread between publications of one
  figure (data/ceilings.csv, every row sourced, and the finite measurements in the database).
  A generation without evidence borrows the best of any, and says so.

Attainment rather than share of peak carries across cards of one generation whose balance of
compute and bandwidth differs (the H20 has 15% of the H200's BF16 peak and 83% of its
bandwidth): a share-of-peak ceiling taken from a memory-bound H200 would call a compute-bound
H20 implausible at any speed.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuarena.analysis import power
from gpuarena.analysis import precision as P
from gpuarena.analysis.credible import (CEILINGS_CSV, DEFAULT_SPREAD, DEFAULT_SPREAD_SOURCE,  # noqa: F401 - API
                                        Ceiling, Evidence, ceiling, evidence, measured_evidence,
                                        published_evidence, spread)
from gpuarena.analysis.roofline import (CONDITIONS, ELEMENT_BYTES, Roof, claim_gpus, claim_number,  # noqa: F401 - API
                                        is_finite_result, precision_class, roof, workload_params)
from gpuarena.data import catalog

# How far two publications of one card's figure for one recipe lie apart: Lambda's H100 SXM5 TF32
# ResNet-50 training, 1,753 images/s in its 2023 table and 1,894 in its 2024 one (published_results.csv):
# 8%.  A claim within this of the best credible figure is not above it.
PUBLISHED_SPREAD = 0.08


@dataclass(frozen=True)
class Limit:
    """What physics and evidence allow one GPU on one workload: impossible above ``peak``,
    implausible above ``credible`` (None: no evidence, only the peak bounds it)."""
    roof: Roof
    ceiling: Ceiling | None
    spread: float = DEFAULT_SPREAD   # a claim within this of the best is not above it

    @property
    def peak(self) -> float:
        return self.roof.peak_throughput

    @property
    def credible(self) -> float | None:
        if self.ceiling is None:
            return None
        return min(self.peak, self.ceiling.best.attainment * (1 + self.spread) / self.roof.time)

    @property
    def highest(self) -> float:
        """The highest throughput that is not rejected."""
        return self.credible if self.credible is not None else self.peak


def limit(workload: str, g: catalog.GPU, request: str, params: dict, store=None,
          pool: list[Evidence] | None = None) -> Limit:
    rf = roof(workload, g, request, params)
    return Limit(rf, ceiling(workload, rf.executed, P.arch_of(g), store, pool),
                 max(PUBLISHED_SPREAD, spread(store, workload)[0]))


def judge(lim: Limit, throughput: float) -> tuple[str, str]:
    """(verdict, reason) for a per-GPU throughput against a Limit."""
    rf, g = lim.roof, lim.roof.gpu
    prec = P.NAMES.get(rf.executed, rf.executed)
    share = rf.share_of_peak(throughput)
    implied = throughput * rf.flops / 1e12
    head = (f"implies {implied:.0f} TFLOP/s per GPU, {share:.1f}x the {g.short}'s {prec} peak ({rf.peak_tflops:g})"
            if share >= 1 else
            f"implies {implied:.1f} TFLOP/s per GPU, {share:.0%} of the {g.short}'s {prec} peak ({rf.peak_tflops:g})")
    if share > 1 * (1 + 1e-9):
        return "impossible", head
    att = rf.attainment(throughput)
    held = power.why(g)
    road = (f"{att:.0%} of its roofline ({rf.bound_by}-bound: "
            + (f"{rf.bytes / 1e6:,.0f} MB per item estimated at {g.memory_bandwidth_gbs:,.0f} GB/s)"
               if rf.bound_by == "memory" else
               f"{rf.flops / 1e9:,.1f} GFLOP per item at {held or 'peak'})"))
    c = lim.ceiling
    if c is None:
        return "plausible", f"{head}; {road}; no credible figure known for this workload and precision, so only the peak bounds it"
    e = c.best
    ref = (f"{e.attainment:.0%} ({catalog.match(e.gpu).short}, {e.engine}: {e.source})"
           + (f" on {e.generation.capitalize()}" if not c.borrowed else
              f"; no {P.arch_of(g).capitalize()} evidence, so the best of any generation"))
    if att > e.attainment * (1 + lim.spread):
        return "implausible", f"{head}; {road}; above the best credibly reached, {ref}"
    return "plausible", (f"{head}; {road}; within the best credibly reached, {ref}, and the spread "
                         f"between publications of one figure ({lim.spread:.0%})")
