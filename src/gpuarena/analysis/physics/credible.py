"""The ceilings credibly reached, per workload, precision class and GPU generation: the best share of
the compute peak, the best share of the memory roof, and a card's own best tuned figure (bounds);
the published evidence (data/ceilings.csv, every row sourced, read by data/evidence.py) and the
finite measurements of the database, and the run-to-run spread that widens them (see
analysis/physics/limits.py).  ceiling_of is the rule micro-benchmark claims (analysis/physics/micro_check.py)
follow too."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from gpuarena.analysis.rows import precision as P
from gpuarena.analysis.rows.engine import engine_of, engine_of_variants
from gpuarena.analysis.physics.roofline import is_finite_result, precision_class, roof, workload_params
from gpuarena.data import catalog
from gpuarena.data.evidence import CEILINGS_CSV, model_ceilings
from gpuarena.analysis.rows.published import EAGER
from gpuarena.errors import UserError
from gpuarena.workloads import registry



SIDES = ("compute", "memory", "card")   # the ceilings of a claim (physics.Limit): see Evidence.share


@dataclass(frozen=True)
class Evidence:
    workload: str
    precision: str           # executed
    generation: str
    gpu: str
    throughput: float
    attainment: float        # of the roofline (the larger of the two shares below)
    share_of_peak: float     # of the datasheet peak
    engine: str
    source: str
    measured: bool = False   # a measurement of this database, not a published figure
    compute_share: float | None = None   # of the peak the card sustains (power.py); None: share_of_peak
    memory_share: float | None = None    # of the memory roof (estimated bytes / bandwidth); None: bytes unknown
    tuned: bool = False      # an engine built for the figure (data/evidence.ENGINE_CLASSES), not a framework's own

    def share(self, side: str) -> float | None:
        """The share of one side of the roofline this figure reached: the compute peak, the memory roof, or
        (``card``) the roofline itself, which carries the card's own figure to a claim's conditions."""
        if side == "compute":
            return self.share_of_peak if self.compute_share is None else self.compute_share
        return self.memory_share if side == "memory" else self.attainment


@functools.lru_cache(maxsize=2)
def published_evidence(path: Path | None = None) -> tuple[Evidence, ...]:
    """data/ceilings.csv (or path) as evidence: rows data/evidence.py has checked, each refused with its
    file when it names no catalog GPU, no workload, or conditions or a precision the workload does not take."""
    out = []
    for row in model_ceilings(path):
        try:
            g = catalog.match(row.gpu)
            r = roof(row.workload, g, P.request_of(row.precision), workload_params(row.workload, row.conditions()))
        except UserError as e:
            raise UserError(f"{Path(path or CEILINGS_CSV).name}: {row.workload} on {row.gpu}: {e}") from None
        out.append(_evidence(r, row.workload, g, row.items_per_s, row.engine, row.source, False,
                             row.engine_class == "tuned"))
    return tuple(out)


def measured_evidence(store, workload: str) -> list[Evidence]:
    """The finite single-GPU measurements of the database as evidence (never a diverged one)."""
    if store is None:
        return []
    from gpuarena.analysis.rows.common import gpu_of, is_search

    out = []
    for r in store.results(workload=workload, status="ok"):
        if r.source == "published" or r.gpus != 1 or not is_finite_result(r) or is_search(r):
            continue
        g = catalog.find(gpu_of(r))
        if g is None:
            continue
        variants = frozenset(r.variant.split("+"))
        try:
            req = P.request_of_variants(variants, r.precision)
            cls = registry.get(workload)
            params = cls.resolve_params({k: v for k, v in r.params.items() if k in cls.param_map()})
            rf = roof(workload, g, req, params)
        except (UserError, KeyError, TypeError, ValueError):
            continue
        thr = r.throughput_median
        if rf.share_of_peak(thr) > 1:
            continue     # a measurement above peak is a broken measurement, not evidence
        out.append(_evidence(rf, workload, g, thr, engine_of_variants(variants),
                             f"gpuarena measurement (run {r.run_id}, {r.variant})", True, False))
    return out


def _evidence(rf, workload: str, g, thr: float, engine: str, source: str, measured: bool, tuned: bool) -> Evidence:
    """A figure's shares.  Its memory share counts only where its roofline is memory-bound: a compute-bound
    figure used the bandwidth it needed, which says nothing of how much an engine can use (the H200's
    compute-bound BERT inference at 30% of its memory roof would have capped an H100 with 70% of its
    bandwidth below the H200's own speed).  Its compute share always counts: the issue's expert bound, no
    ResNet-50 trained above 27% of a tensor peak, is read from memory-bound MLPerf figures."""
    t_c = max(rf.t_compute, rf.t_sustained)
    return Evidence(workload, rf.executed, P.arch_of(g), g.name, thr, rf.attainment(thr), rf.share_of_peak(thr),
                    engine, source, measured, thr * t_c, thr * rf.t_memory if rf.t_memory > t_c else None, tuned)


def evidence(workload: str, store=None) -> list[Evidence]:
    return [e for e in published_evidence() if e.workload == workload] + measured_evidence(store, workload)


DEFAULT_SPREAD = 0.025
DEFAULT_SPREAD_SOURCE = ("same case in two H200 sessions: bert-large-infer tf32 516.3 vs 503.9 seq/s "
                         "(docs/data/h200-s3/-s4-2026-11-29.json)")


def spread(store, workload: str) -> tuple[float, str]:
    """Run-to-run spread of a workload's throughput: (fraction, where it comes from)."""
    if store is not None:
        from gpuarena.analysis.rows.common import gpu_of

        seen: dict[str, list[float]] = {}
        for r in store.results(workload=workload, status="ok"):
            if r.source == "published" or not is_finite_result(r):
                continue
            if engine_of(r) != EAGER:
                continue    # the claims are of eager code: CUDA graphs make compiled runs far steadier
            # one case timed by one code (a changed workload is another case: the doctor's ResNet-50 step
            # ran 2,669 images/s on 2026-12-01 and 3,997 on 2026-12-04 under another code hash)
            key = json.dumps([gpu_of(r), r.variant, r.params, r.gpus, r.workload_version, r.code_hash],
                             sort_keys=True, default=str)
            seen.setdefault(key, []).append(r.throughput_median)
        pairs = sorted(max(v) / min(v) - 1 for v in seen.values() if len(v) > 1)
        if pairs:
            half = len(pairs) // 2
            mid = pairs[half] if len(pairs) % 2 else (pairs[half - 1] + pairs[half]) / 2
            return mid, (f"median difference between repeated runs of the {len(pairs)} eager {workload} case(s) "
                         "measured more than once in this database")
    return DEFAULT_SPREAD, DEFAULT_SPREAD_SOURCE


class Credible(Protocol):
    """What the ceiling rule reads of a piece of evidence: Evidence here, MicroEvidence in micro_check."""
    measured: bool           # a measurement of this database, not a published figure

    @property
    def generation(self) -> str: ...


E = TypeVar("E", bound=Credible)


@dataclass(frozen=True)
class Ceiling(Generic[E]):
    best: E                  # an Evidence for a model claim, a micro_check.MicroEvidence for a micro one
    borrowed: bool           # no evidence on this generation: the best of the others


def ceiling_of(same: Sequence[E], generation: str, key: Callable[[E], float]) -> Ceiling[E] | None:
    """The one rule for every claim, model or micro: of the evidence of one figure at one precision class
    (``same``), the best by ``key`` on this generation; where the generation has no published figure,
    the best of any generation (borrowed, and said).

    A measurement of this database shows what is reachable, not that more is not: it raises a ceiling
    but never sets one alone.  Without a published figure there is no ceiling (a PyTorch int8-dynamic
    ResNet-50 at 17% of the INT8 peak had capped MLPerf's audited TensorRT INT8 figures, which reach
    44-56%); a generation whose only evidence is measured borrows the published."""
    if not any(not e.measured for e in same):
        return None
    here = [e for e in same if e.generation == generation]
    if any(not e.measured for e in here):
        return Ceiling(max(here, key=key), False)
    return Ceiling(max([e for e in same if not e.measured] + here, key=key), True)


def anywhere(same: Sequence[E], generation: str, key: Callable[[E], float]) -> Ceiling[E] | None:
    """The best by ``key`` of every generation's published evidence and this generation's measurements: how
    far any engine has gone, the bound a claim above its own generation's framework-only ceiling meets."""
    pool = [e for e in same if not e.measured or e.generation == generation]
    if not any(not e.measured for e in pool):
        return None
    best = max(pool, key=key)
    return Ceiling(best, best.generation != generation)


@dataclass(frozen=True)
class Bound:
    """One ceiling of a claim: the best share credibly reached of one side (SIDES) on the claim's generation
    (on its card, for ``card``), or borrowed from another generation; ``tuned``: a tuned engine published on
    the generation (the card) at this precision class, so the ceiling rejects rather than warns."""
    side: str
    ceiling: Ceiling[Evidence]
    tuned: bool

    @property
    def share(self) -> float:
        return self.ceiling.best.share(self.side)


def bounds(workload: str, executed: str, gpu: str, generation: str, store=None,
           pool: list[Evidence] | None = None) -> tuple[list[Bound], list[Bound]]:
    """(the claim's ceilings, the best of any generation and engine per side), at the executed precision's
    class: compute and memory by ceiling_of's rule, and the card's own best figure where it has one."""
    pool = evidence(workload, store) if pool is None else pool
    cls = precision_class(executed)
    same = [e for e in pool if precision_class(e.precision) == cls]
    own, reach = [], []
    for side in SIDES:
        here = [e for e in same if e.share(side) is not None
                and (side != "card" or (e.gpu == gpu and (e.tuned or e.measured)))]   # a framework's is no card's best
        c = ceiling_of(here, generation, lambda e, s=side: e.share(s))
        if c is None or (side == "card" and c.borrowed):
            continue
        own.append(Bound(side, c, not c.borrowed and any(e.tuned and not e.measured for e in here
                                                          if e.generation == generation)))
        a = None if side == "card" else anywhere(here, generation, lambda e, s=side: e.share(s))
        if a is not None:
            reach.append(Bound(side, a, a.best.tuned))
    return own, reach


def ceiling(workload: str, executed: str, generation: str, store=None,
            pool: list[Evidence] | None = None, side: str = "compute") -> Ceiling[Evidence] | None:
    """The best share of one side of the roofline credibly reached on the workload at the precision class on
    this generation (ceiling_of's rule).

    Per generation because a share does not carry perfectly: a newer die with a larger L2 and newer
    kernels beats its DRAM roofline by more (MLPerf's H100 ResNet-50 reaches 69% of it, the A100 50%), and
    a generation whose tensor peak grew faster than everything else reaches less of it (MLPerf's ResNet-50
    training: 27% of the A100's FP16 peak, 20% of the H200's)."""
    pool = evidence(workload, store) if pool is None else pool
    cls = precision_class(executed)
    same = [e for e in pool if precision_class(e.precision) == cls and e.share(side) is not None]
    return ceiling_of(same, generation, lambda e: e.share(side))
