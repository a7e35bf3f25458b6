"""One physics behind every decision: the roofline that check, advise, compare and the report ask.

Per item of a workload on GPU g:

    roofline time = max(F / P(g), B / BW(g))

F: FLOPs per item (the workload class's ``flops``); P(g): the catalog's dense peak at the
precision the arithmetic executes as on g's generation (analysis.precision); B: the estimated
DRAM traffic per item (the workload class's ``bytes_per_item``; None: compute alone bounds
it); BW(g): the catalog's memory bandwidth.

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

import csv
import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

from gpuarena.analysis import precision as P
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.safeio import MIN_MAGNITUDE

CEILINGS_CSV = Path(__file__).parents[1] / "data" / "ceilings.csv"
CONDITIONS = {"batch_size": "batch_size", "seq_len": "seq_len", "image_size": "image_size",
              "steps": "inference_steps"}
# How far two publications of one card's figure for one recipe lie apart: Lambda's H100 SXM5 TF32
# ResNet-50 training, 1,753 images/s in its 2023 table and 1,894 in its 2024 one (published_results.csv):
# 8%.  A claim within this of the best credible figure is not above it.
PUBLISHED_SPREAD = 0.08
ELEMENT_BYTES = {"fp8": 1, "int8": 1, "bf16": 2, "fp16": 2}   # else 4: FP32 tensors (TF32 math reads FP32)


def precision_class(prec: str) -> str:
    """Precisions that share a peak: BF16 and FP16 run on the same tensor cores at the same rate."""
    return "fp16/bf16" if prec in ("bf16", "fp16") else prec


def _workload(workload: str):
    from gpuarena.workloads import registry

    return registry.get(workload)


def workload_params(workload: str, given: dict) -> dict:
    """The workload's parameters with a claim's conditions applied (unknown ones refused)."""
    cls = _workload(workload)
    known = cls.param_map()
    params = {}
    for key, name in CONDITIONS.items():
        v = given.get(key)
        if v in (None, ""):
            continue
        try:
            fv = float(v)
        except (TypeError, ValueError):
            raise UserError(f"{key} {v!r}: must be a whole number") from None
        if not math.isfinite(fv) or fv < 1 or int(fv) != fv:
            raise UserError(f"{key} {v!r}: must be a whole number >= 1")
        if name not in known:
            raise UserError(f"{workload} has no {key} condition (it takes: "
                            + ", ".join(k for k, n in CONDITIONS.items() if n in known) + ")")
        params[name] = int(fv)
    return cls.resolve_params(params)


def claim_number(claim: dict, key: str, positive: bool = True) -> float | None:
    """A number a claim states (check, the LLM claims): None when absent, else finite, positive, not subnormal."""
    v = claim.get(key)
    if v in (None, ""):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise UserError(f"claim {key} {v!r}: not a number") from None
    if not math.isfinite(x) or (positive and x <= 0) or (x != 0 and abs(x) < MIN_MAGNITUDE):
        raise UserError(f"claim {key} {v!r}: must be a finite positive number, at least {MIN_MAGNITUDE:g}")
    return x


@dataclass(frozen=True)
class Roof:
    """The roofline of one workload at given parameters and request on one GPU."""
    gpu: catalog.GPU
    executed: str            # the precision whose peak bounds it
    peak_tflops: float
    flops: float             # per item
    bytes: float | None      # per item, estimated
    t_compute: float         # s per item at peak
    t_memory: float          # s per item at full bandwidth (0 when bytes unknown)

    @property
    def time(self) -> float:
        return max(self.t_compute, self.t_memory)

    @property
    def bound_by(self) -> str:
        return "memory" if self.t_memory > self.t_compute else "compute"

    @property
    def peak_throughput(self) -> float:
        """Items/s at the executed precision's peak: above it a claim is impossible."""
        return 1.0 / self.t_compute

    def attainment(self, throughput: float) -> float:
        return self.time * throughput

    def share_of_peak(self, throughput: float) -> float:
        return self.t_compute * throughput


def roof(workload: str, g: catalog.GPU, request: str, params: dict) -> Roof:
    """The roofline of ``workload`` at ``params`` (resolved) on ``g`` for a precision request."""
    cls = _workload(workload)
    f = cls.flops(params)
    if not f:
        raise UserError(f"workload {workload!r} has no FLOP count, so its figures cannot be judged")
    prec = P.peak_precision(workload, request, P.arch_of(g))
    peak = g.peaks.get(prec)
    if not peak:
        raise UserError(f"{g.name} has no {P.NAMES.get(prec, prec)} peak in the catalog; it has: "
                        f"{', '.join(g.peaks)}")
    b = cls.bytes_per_item(params, ELEMENT_BYTES.get(request, 4))
    bw = g.memory_bandwidth_gbs
    t_mem = b / (bw * 1e9) if (b and bw) else 0.0
    return Roof(g, prec, peak, float(f), float(b) if b else None, f / (peak * 1e12), t_mem)


# --- evidence: the best credibly reached, per workload, precision class and generation ---------

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


@functools.lru_cache(maxsize=1)
def published_evidence() -> tuple[Evidence, ...]:
    out = []
    with open(CEILINGS_CSV, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            g = catalog.match(row["gpu"])
            thr = float(row["throughput"]) if row["throughput"] else float(row["batch_size"] or 1) / float(row["latency_s"])
            params = workload_params(row["workload"], row)
            r = roof(row["workload"], g, P.request_of(row["precision"]), params)
            out.append(Evidence(row["workload"], r.executed, P.arch_of(g), g.name, thr, r.attainment(thr),
                                r.share_of_peak(thr), row["engine"], row["source"]))
    return tuple(out)


def is_finite_result(r: dict) -> bool:
    """A result a decision may rest on: ok, finite output, a throughput."""
    return r.status == "ok" and bool(r.throughput_median) and not r.extra.nan


def measured_evidence(store, workload: str) -> list[Evidence]:
    """The finite single-GPU measurements of the database as evidence (never a diverged one)."""
    if store is None:
        return []
    from gpuarena.analysis.rows import gpu_of, is_search

    out = []
    for r in store.results(workload=workload, status="ok"):
        if r.get("source") == "published" or (r.get("gpus") or 1) != 1 or not is_finite_result(r) or is_search(r):
            continue
        g = catalog.find(gpu_of(r))
        if g is None:
            continue
        variants = frozenset(str(r.get("variant") or "seed").split("+"))
        try:
            req = P.request_of_variants(variants, r.get("precision"))
            params = _workload(workload).resolve_params(
                {k: v for k, v in (r.get("params") or {}).items() if k in _workload(workload).param_map()})
            rf = roof(workload, g, req, params)
        except (UserError, KeyError, TypeError, ValueError):
            continue
        thr = r["throughput_median"]
        if rf.share_of_peak(thr) > 1:
            continue     # a measurement above peak is a broken measurement, not evidence
        out.append(Evidence(workload, rf.executed, P.arch_of(g), g.name, thr, rf.attainment(thr),
                            rf.share_of_peak(thr), "PyTorch compiled" if "compile" in variants else "PyTorch eager",
                            f"gpuarena measurement (run {r.get('run_id')}, {r.get('variant')})"))
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
            if r.get("source") == "published" or not is_finite_result(r):
                continue
            if "compile" in str(r.get("variant") or "").split("+"):
                continue    # the claims are of eager code: CUDA graphs make compiled runs far steadier
            key = json.dumps([gpu_of(r), r.get("variant"), r.get("params"), r.get("gpus")], sort_keys=True, default=str)
            seen.setdefault(key, []).append(r["throughput_median"])
        pairs = sorted(max(v) / min(v) - 1 for v in seen.values() if len(v) > 1)
        if pairs:
            mid = pairs[len(pairs) // 2] if len(pairs) % 2 else (pairs[len(pairs) // 2 - 1] + pairs[len(pairs) // 2]) / 2
            return mid, (f"median difference between repeated runs of the {len(pairs)} eager {workload} case(s) "
                         "measured more than once in this database")
    return DEFAULT_SPREAD, DEFAULT_SPREAD_SOURCE


@dataclass(frozen=True)
class Ceiling:
    best: Evidence
    borrowed: bool           # no evidence on this generation: the best of the others


def ceiling(workload: str, executed: str, generation: str, store=None,
            pool: list[Evidence] | None = None) -> Ceiling | None:
    """The best attainment credibly reached on the workload at the precision class on this generation;
    where the generation has none, the best of any generation (borrowed, and said).

    Per generation because attainment of an estimated roofline does not carry perfectly: a newer die
    with a larger L2 and newer kernels beats its DRAM roofline by more (MLPerf's H100 ResNet-50 reaches
    69% of it, the A100 50%), so an A100 figure judged by the H100's best would pass at 4,600 images/s."""
    pool = evidence(workload, store) if pool is None else pool
    cls = precision_class(executed)
    same = [e for e in pool if precision_class(e.precision) == cls]
    if not same:
        return None
    here = [e for e in same if e.generation == generation]
    if here:
        return Ceiling(max(here, key=lambda e: e.attainment), False)
    return Ceiling(max(same, key=lambda e: e.attainment), True)


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
    road = (f"{att:.0%} of its roofline ({rf.bound_by}-bound: "
            + (f"{rf.bytes / 1e6:,.0f} MB per item estimated at {g.memory_bandwidth_gbs:,.0f} GB/s)"
               if rf.bound_by == "memory" else f"{rf.flops / 1e9:,.1f} GFLOP per item at peak)"))
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
