"""The best attainment credibly reached, per workload, precision class and GPU generation: the
published evidence (data/ceilings.csv, every row sourced, read by data/evidence.py) and the finite
measurements of the database, and the run-to-run spread that widens it (see analysis/physics.py).
ceiling_of is the rule micro-benchmark claims (analysis/micro_check.py) follow too."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from gpuarena.analysis import precision as P
from gpuarena.analysis.roofline import _workload, is_finite_result, precision_class, roof, workload_params
from gpuarena.data import catalog
from gpuarena.data.evidence import CEILINGS_CSV, model_ceilings
from gpuarena.errors import UserError



@dataclass(frozen=True)
class Evidence:
    workload: str
    precision: str           # executed
    generation: str
    gpu: str
    throughput: float
    attainment: float
    share_of_peak: float
    engine: str
    source: str
    measured: bool = False   # a measurement of this database, not a published figure


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
        thr = row.items_per_s
        out.append(Evidence(row.workload, r.executed, P.arch_of(g), g.name, thr, r.attainment(thr),
                            r.share_of_peak(thr), row.engine, row.source))
    return tuple(out)


def measured_evidence(store, workload: str) -> list[Evidence]:
    """The finite single-GPU measurements of the database as evidence (never a diverged one)."""
    if store is None:
        return []
    from gpuarena.analysis.rows import gpu_of, is_search

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
            params = _workload(workload).resolve_params(
                {k: v for k, v in r.params.items() if k in _workload(workload).param_map()})
            rf = roof(workload, g, req, params)
        except (UserError, KeyError, TypeError, ValueError):
            continue
        thr = r.throughput_median
        if rf.share_of_peak(thr) > 1:
            continue     # a measurement above peak is a broken measurement, not evidence
        out.append(Evidence(workload, rf.executed, P.arch_of(g), g.name, thr, rf.attainment(thr),
                            rf.share_of_peak(thr), "PyTorch compiled" if "compile" in variants else "PyTorch eager",
                            f"gpuarena measurement (run {r.run_id}, {r.variant})", measured=True))
    return out


def evidence(workload: str, store=None) -> list[Evidence]:
    return [e for e in published_evidence() if e.workload == workload] + measured_evidence(store, workload)


DEFAULT_SPREAD = 0.025
DEFAULT_SPREAD_SOURCE = ("same case in two H200 sessions: bert-large-infer tf32 516.3 vs 503.9 seq/s "
                         "(docs/data/h200-s3/-s4-2026-11-29.json)")


def spread(store, workload: str) -> tuple[float, str]:
    """Run-to-run spread of a workload's throughput: (fraction, where it comes from)."""
    if store is not None:
        from gpuarena.analysis.rows import gpu_of

        seen: dict[str, list[float]] = {}
        for r in store.results(workload=workload, status="ok"):
            if r.source == "published" or not is_finite_result(r):
                continue
            if "compile" in r.variant.split("+"):
                continue    # the claims are of eager code: CUDA graphs make compiled runs far steadier
            key = json.dumps([gpu_of(r), r.variant, r.params, r.gpus], sort_keys=True, default=str)
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


def ceiling(workload: str, executed: str, generation: str, store=None,
            pool: list[Evidence] | None = None) -> Ceiling[Evidence] | None:
    """The best attainment credibly reached on the workload at the precision class on this generation
    (ceiling_of's rule).

    Per generation because attainment of an estimated roofline does not carry perfectly: a newer die
    with a larger L2 and newer kernels beats its DRAM roofline by more (MLPerf's H100 ResNet-50 reaches
    69% of it, the A100 50%), so an A100 figure judged by the H100's best would pass at 4,600 images/s."""
    pool = evidence(workload, store) if pool is None else pool
    cls = precision_class(executed)
    return ceiling_of([e for e in pool if precision_class(e.precision) == cls], generation, lambda e: e.attainment)
