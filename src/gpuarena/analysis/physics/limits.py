"""One physics behind every decision: the roofline that check, advise, compare and the report ask.

Per item of a workload on GPU g:

    roofline time = max(F / P(g), B / BW(g))

F: FLOPs per item (the workload class's ``flops``); P(g): the catalog's dense peak at the
precision the arithmetic executes as on g's generation (analysis.precision); B: the estimated
DRAM traffic per item (the workload class's ``bytes_per_item``; None: compute alone bounds
it); BW(g): the catalog's memory bandwidth.  The compute time of a card that cannot hold its
quoted clock under its power limit runs at the peak it sustains (analysis/rows/power.py: an A100
PCIe at 250 W against the SXM4's 400 W at one peak), so a figure credible on the SXM4 is not
credible on the PCIe card where compute bounds it.

A throughput's *attainment* is roofline time x throughput: 1.0 is on the roof.  The bounds every
verb uses:

- **impossible**: F x throughput above P(g): above the peak of the executed precision, no
  estimate involved;
- **implausible**: above what the evidence allows at the claim's conditions, the tighter of two
  ceilings per workload, precision class (BF16 and FP16 are one: the same tensor cores at the
  same rate) and architecture generation: the best share of the compute peak reached (F x
  throughput / P) and the best share of the memory roof (B x throughput / BW) among figures
  that memory bounds (a compute-bound figure's share of it is no ceiling), each widened by
  the spread between publications of one figure; and, where the card has a published figure of
  a tuned engine, that figure carried to the claim's conditions by its roofline (MLPerf's
  7,951 images/s caps the H200's ResNet-50 training).  Evidence: data/ceilings.csv, every row
  sourced, and the finite measurements in the database, which raise a ceiling but never set one.
- **unverified** (plausible, and said): a ceiling borrowed from another generation (none of its
  own), or one that framework figures alone set (no tuned engine published on the generation)
  while the claim is within what any engine reached on any generation.  Either only warns.

Two ceilings rather than one attainment because a card is bound by one side and the evidence by
either: the H100's 69% of a *memory* roofline (MLPerf ResNet-50) says nothing about the
compute-bound H20, whose BF16 peak is 15% of the H200's; MLPerf's best share of a Hopper compute
peak (20%) does.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuarena.analysis.rows import power
from gpuarena.analysis.rows import precision as P
from gpuarena.analysis.physics.credible import DEFAULT_SPREAD, Bound, Ceiling, Evidence, bounds, spread
from gpuarena.analysis.physics.roofline import Roof, roof
from gpuarena.data import catalog
from gpuarena.analysis.rows.verdict import ClaimVerdict as V

# How far two publications of one card's figure for one recipe lie apart: Lambda's H100 SXM5 TF32
# ResNet-50 training, 1,753 images/s in its 2023 table and 1,894 in its 2024 one (published_results.csv):
# 8%.  A claim within this of the best credible figure is not above it.
PUBLISHED_SPREAD = 0.08


@dataclass(frozen=True)
class Limit:
    """What physics and evidence allow one GPU on one workload at a claim's conditions: impossible above
    ``peak``; implausible above ``rejects_above``; unverified between ``credible`` (or, with no evidence on
    the generation, the borrowed ceiling) and that."""
    roof: Roof
    bounds: tuple[Bound, ...] = ()    # this generation's ceilings (or borrowed), per side
    reach: tuple[Bound, ...] = ()     # the best of any generation and engine, per side
    spread: float = DEFAULT_SPREAD    # a claim within this of a ceiling is not above it

    @property
    def peak(self) -> float:
        return self.roof.peak_throughput

    def allows(self, b: Bound) -> float:
        """Items/s a ceiling allows at the claim's conditions: its share of that side's time, widened."""
        rf = self.roof
        t = {"compute": max(rf.t_compute, rf.t_sustained), "memory": rf.t_memory, "card": rf.time}[b.side]
        return min(self.peak, b.share * (1 + self.spread) / t) if t else self.peak

    def _tightest(self, among) -> Bound | None:
        return min(among, key=self.allows, default=None)

    @property
    def binding(self) -> Bound | None:
        """The tightest ceiling evidence on this generation sets (None: the generation has none)."""
        return self._tightest([b for b in self.bounds if not b.ceiling.borrowed])

    @property
    def borrowed(self) -> Bound | None:
        """With no evidence on this generation, the tightest of the others': it warns, never rejects."""
        return None if self.binding else self._tightest(self.bounds)

    @property
    def ceiling(self) -> Ceiling | None:    # the evidence of the bound that holds
        b = self.binding or self.borrowed
        return None if b is None else b.ceiling

    @property
    def credible(self) -> float | None:
        """Items/s the generation's evidence allows (None: no evidence on the generation)."""
        return None if self.binding is None else self.allows(self.binding)

    @property
    def widest(self) -> Bound | None:
        return self._tightest(self.reach)

    @property
    def rejects_above(self) -> float:
        """Above it implausible: a ceiling a tuned engine published on the generation at; where framework
        figures alone set the generation's ceilings, the best any engine reached on any generation."""
        tuned = [b for b in self.bounds if b.tuned and not b.ceiling.borrowed]
        if tuned:
            return min(self.allows(b) for b in tuned)
        if self.binding is None:
            return self.peak
        return max(self.credible, self.allows(self.widest) if self.widest else 0.0)

    def unverified(self, throughput: float) -> bool:
        """A figure no ceiling of its generation vouches for and none rejects: a borrowed ceiling, or above
        one that framework figures alone set (within rejects_above).  It is plausible, with a warning."""
        if throughput > self.rejects_above * (1 + 1e-9):
            return False
        return self.binding is None and self.borrowed is not None or (
            self.credible is not None and throughput > self.credible * (1 + 1e-9))

    @property
    def highest(self) -> float:
        """The highest figure the evidence supports (a projection's cap): the generation's ceiling, else the
        borrowed one, else the peak; never above what check accepts."""
        if self.credible is not None:
            return self.credible
        return self.allows(self.borrowed) if self.borrowed else self.peak


def limit(workload: str, g: catalog.GPU, request: str, params: dict, store=None,
          pool: list[Evidence] | None = None) -> Limit:
    rf = roof(workload, g, request, params)
    own, reach = bounds(workload, rf.executed, g.name, P.arch_of(g), store, pool)
    return Limit(rf, tuple(own), tuple(reach), max(PUBLISHED_SPREAD, spread(store, workload)[0]))


def _side(lim: Limit, b: Bound) -> str:
    """One ceiling as a verdict states it: the share it reached and the evidence that sets it."""
    e, rf = b.ceiling.best, lim.roof
    where = f"{catalog.match(e.gpu).short}, {e.engine}: {e.source}"
    if b.side == "card":
        return f"its own best figure, {e.throughput:,.0f}/s ({where})"
    what = f"{P.NAMES.get(rf.executed, rf.executed)} peak" if b.side == "compute" else "memory roof"
    return f"{e.share(b.side):.0%} of the {what} ({where})"


def _sides(lim: Limit, first: Bound, others: bool = True) -> str:
    """The bound that holds, with its source, then (``others``) what the looser ones allow."""
    rest = [b for b in lim.bounds if others and b is not first and b.ceiling.borrowed == first.ceiling.borrowed]
    return (f"the {first.side} bound holds at {lim.allows(first):,.0f}/s, {_side(lim, first)}"
            + "".join(f"; {b.side} bound {lim.allows(b):,.0f}/s" for b in rest))


def judge(lim: Limit, throughput: float) -> tuple[V, str]:
    """(verdict, reason) for a per-GPU throughput against a Limit."""
    rf, g = lim.roof, lim.roof.gpu
    prec = P.NAMES.get(rf.executed, rf.executed)
    share = rf.share_of_peak(throughput)
    implied = throughput * rf.flops / 1e12
    head = (f"implies {implied:.0f} TFLOP/s per GPU, {share:.1f}x the {g.short}'s {prec} peak ({rf.peak_tflops:g})"
            if share >= 1 else
            f"implies {implied:.1f} TFLOP/s per GPU, {share:.0%} of the {g.short}'s {prec} peak ({rf.peak_tflops:g})")
    if share > 1 * (1 + 1e-9):
        return V.IMPOSSIBLE, head
    att = rf.attainment(throughput)
    held = power.why(g)
    road = (f"{att:.0%} of its roofline ({rf.bound_by}-bound: "
            + (f"{rf.bytes / 1e6:,.0f} MB per item estimated at {g.memory_bandwidth_gbs:,.0f} GB/s)"
               if rf.bound_by == "memory" else
               f"{rf.flops / 1e9:,.1f} GFLOP per item at {held or 'peak'})"))
    gen = P.arch_of(g).capitalize()
    widened = f"each bound +{lim.spread:.0%} (publication spread)"
    if lim.binding is None and lim.borrowed is None:
        return V.PLAUSIBLE, (f"{head}; {road}; no credible figure known for this workload and precision, so only the "
                             "peak bounds it")
    if lim.binding is None:
        b = lim.borrowed
        above = throughput > lim.allows(b) * (1 + 1e-9)
        return V.PLAUSIBLE, (f"{head}; {road}; unverified: no evidence for {gen}, so no ceiling rejects it; "
                             + ("above" if above else "within") + f" the best of other generations: {_sides(lim, b)}; "
                             f"{widened}")
    b = lim.binding
    if throughput <= lim.credible * (1 + 1e-9):
        return V.PLAUSIBLE, f"{head}; {road}; within the evidence: {_sides(lim, b, False)}; {widened}"
    if throughput > lim.rejects_above * (1 + 1e-9):
        return V.IMPLAUSIBLE, f"{head}; {road}; above the evidence: {_sides(lim, b)}; {widened}"
    w = lim.widest
    best = ("" if w is None else f", within the best any engine reached on any generation "
            f"({w.ceiling.best.generation.capitalize()}: {lim.allows(w):,.0f}/s here, {_side(lim, w)})")
    return V.PLAUSIBLE, (f"{head}; {road}; unverified: above the {gen} ceiling, which framework figures alone set "
                         f"({_sides(lim, b)}){best}; {widened}")
