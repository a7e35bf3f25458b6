"""The articles' side-by-side table, with honest uncertainty.

For every configuration (workload, variant, params, size, GPU count) that the
baseline GPU and another GPU both ran with status ok: each median, the ratio
to the baseline, and a 95% interval on the ratio from the raw repeats
(measure.stats.ratio_ci95 over per-repeat throughputs).  A ratio is called
"1.23x faster" or "0.81x (slower)" only when its interval excludes 1 (asv's and
pyperf's rule); published rows have no repeats and say so.  Results whose
workload version or code hash differ are not compared (asv's rule): they are
skipped with the reason.  GPU identity is the catalog name where the device
name matches one catalog row (so a measured "NVIDIA A100-SXM4-40GB" meets a
published "A100 40GB SXM4"), else the device name itself.
"""

from __future__ import annotations

import heapq
import math
from typing import Any, Optional

from pydantic import BaseModel, Field, computed_field

from gpuarena.analysis.rows import common as R
from gpuarena.analysis.rows.engine import engine_of
from gpuarena.store.flags import diverged
from gpuarena.store.result import Result
from gpuarena.analysis.rows.common import natural_key
from gpuarena.analysis.rows.verdict import CompareVerdict
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.identity import why_not_comparable
from gpuarena.workloads import registry
from gpuarena.measure.stats import ratio_ci95
from gpuarena.errors import did_you_mean

# Published params may use another name for the same thing than a workload does.
SYNONYMS = {"seq_len": ("seq_len", "seq_length", "sequence_length", "max_seq_len")}


def _defaults(workload: str | None) -> dict:
    try:
        return {k: p.default for k, p in registry.get(workload).param_map().items()}
    except UserError:   # a published workload gpuarena does not run: nothing to hold the others to
        return {}


def _where(workload: str | None) -> tuple:
    """Where a served endpoint is (endpoint-serve's base_url ...): not what was measured, so not compared."""
    return getattr(registry.find(workload) if workload else None, "where_params", ())


def _params_match(a: dict, b: dict, a_pub: bool, b_pub: bool, workload: str | None = None) -> bool:
    """Measured vs measured: equal params.  With a published row: the params it states must agree,
    and every other parameter of the measured row must be the workload's default (the article's setup):
    a 10-step, batch-256 search is not the published 50-step figure at batch 1."""
    if not a_pub and not b_pub:
        where = _where(workload)
        return ({k: v for k, v in (a or {}).items() if k not in where}
                == {k: v for k, v in (b or {}).items() if k not in where})
    pub, other = (a, b) if a_pub else (b, a)
    stated = set()
    for k, v in (pub or {}).items():
        names = SYNONYMS.get(k, (k,))
        stated.update(names)
        present = [n for n in names if n in (other or {})]
        if v is None:
            continue
        if not present or other[present[0]] != v:
            return False
    if a_pub and b_pub:
        return True
    defaults = _defaults(workload)
    return all(other[k] == defaults[k] for k in (other or {}) if k not in stated and k in defaults)


def outcome(lo: float | None, hi: float | None, published: bool) -> CompareVerdict:
    """The one verdict on a ratio of throughputs and its 95% interval: faster or slower only when
    the interval leaves 1.0 (report/ladder.py says the same words)."""
    if published or lo is None or hi is None or not math.isfinite(lo) or not math.isfinite(hi):
        return CompareVerdict.NO_CI_PUBLISHED if published else CompareVerdict.NO_CI_TOO_FEW
    if lo > 1.0:
        return CompareVerdict.FASTER
    if hi < 1.0:
        return CompareVerdict.SLOWER
    return CompareVerdict.NO_DIFFERENCE


def verdict(ratio: float, lo: float | None, hi: float | None, published: bool) -> str:
    """The verdict's text: "1.23x faster", "0.81x (slower)", "no significant difference", "no CI (...)"."""
    return outcome(lo, hi, published).text(ratio)


class ComparisonRow(BaseModel):
    """One configuration that the baseline GPU and another GPU both ran: the other's figure against
    the baseline's, the ratio and its 95% interval from the raw repeats, and the verdict."""

    workload: str
    variant: str
    expected_ratio: Optional[float]          # 1.0 for identical silicon (the A800 and the A100), else None
    params: dict[str, Any]
    size: str
    gpus: int
    gpu: str
    baseline_gpu: str
    unit: Optional[str]
    baseline_value: float
    value: float
    ratio: float
    ci95_low: Optional[float]
    ci95_high: Optional[float]
    outcome: CompareVerdict = Field(exclude=True)   # the JSON carries its text, `verdict`
    baseline_source: str
    source: str
    engine: str
    origin: Optional[str]
    result_id: Optional[int]
    diverged: bool
    flags: list[str]

    @computed_field
    @property
    def verdict(self) -> str:
        return self.outcome.text(self.ratio)


class ComparisonSummary(BaseModel):
    """One GPU's rows against the baseline: the geometric mean of the ratios (each result once, the
    diverged left out) and how many verdicts of each kind."""

    gpu: str
    n: int
    geomean_ratio: Optional[float]
    diverged_left_out: int
    faster: int
    slower: int
    no_difference: int
    no_ci: int


class ComparisonSkip(BaseModel):
    """A configuration not compared, and why (another workload version or code, another engine)."""

    workload: str
    variant: str
    params: dict[str, Any]
    gpu: str
    reason: str


class Comparison(BaseModel):
    """What `gpuarena compare` computes; ``--format json`` prints its model_dump(mode="json")."""

    baseline: str                            # the catalog name, else the device name
    rows: list[ComparisonRow]
    summary: list[ComparisonSummary]
    skipped: list[ComparisonSkip]


def compare(store, baseline: str, workload: str | None = None) -> Comparison:
    """Compare every GPU in the database against `baseline` (see compare_rows)."""
    R.known_workload(store, workload)
    return compare_rows(store.results(status="ok"), baseline, workload)


def compare_rows(results: list[Result], baseline: str, workload: str | None = None) -> Comparison:
    """Compare every GPU of the ok ``results`` against `baseline`: a pure function of typed rows.
    Raises UserError when the baseline has no ok results or nothing is comparable.
    """
    results = R.latest([r for r in results if r.status == "ok" and r.throughput_median
                        and (workload is None or r.workload == workload)])
    base_rows = _baseline_rows(results, baseline, workload)
    base_id = R.gpu_of(base_rows[0])
    others = [r for r in results if R.gpu_of(r) != base_id]
    index = _index(base_rows)
    rows, skipped = [], []
    for o in others:
        for b in _candidates(index, o):
            if not _same_config(b, o):
                continue
            why = why_not_comparable(b, o)
            if not why and engine_of(b) != engine_of(o):
                why = f"different engines ({engine_of(o)} against {engine_of(b)})"
            if why:
                skipped.append(ComparisonSkip(workload=o.workload, variant=o.variant, params=dict(o.params),
                                              gpu=R.gpu_of(o), reason=why))
                continue
            rows.append(_row(b, o, base_id))
    if not rows:
        reason = f"; skipped: {skipped[0].reason}" if skipped else ""
        raise UserError(f"nothing to compare with {base_id}: no other GPU ran the same workload, variant "
                        f"and parameters{reason}")
    rows.sort(key=lambda r: (r.workload, r.variant, natural_key(R.fmt_params(r.params)), r.gpu, r.source))
    return Comparison(baseline=base_id, rows=rows, summary=_summary(rows), skipped=skipped)


def _baseline_rows(results: list[Result], baseline: str, workload: str | None) -> list[Result]:
    """The baseline GPU's rows; a UserError naming the GPUs there are when it has none."""
    base_id = R.baseline_gpu(results, baseline)
    base_rows = [r for r in results if R.gpu_of(r) == base_id
                 or (r.device_name or "").lower() == baseline.lower()]
    if not base_rows:
        gpus = sorted({R.gpu_of(r) for r in results})
        raise UserError(f"no ok results for baseline {baseline!r}"
                        + did_you_mean(baseline, sorted(gpus))
                        + (f" (workload {workload})" if workload else "")
                        + (f"; GPUs in the database: {', '.join(gpus)}" if gpus else "; the database has no ok results")
                        + ("" if catalog.candidates(baseline) else " (`gpuarena gpus` lists the catalog)"))
    return base_rows


def _index(base_rows: list[Result]) -> tuple[dict, dict, dict, dict]:
    """The baseline rows indexed once, so that each other result meets only the rows it may match
    (every result against every baseline row took 53 s for 10,000 distinct cases):
    (measured rows by case and parameters, published rows by case, every row by case, each list in
    the baseline's order as (position, row); and each workload's where_params)."""
    measured: dict[tuple, list] = {}
    published: dict[tuple, list] = {}
    every: dict[tuple, list] = {}
    where: dict = {}
    for pos, b in enumerate(base_rows):
        case = _case(b)
        every.setdefault(case, []).append((pos, b))
        if b.source == "published":
            published.setdefault(case, []).append((pos, b))
        else:
            measured.setdefault((case, _params_key(b, where)), []).append((pos, b))
    return measured, published, every, where


def _candidates(index: tuple[dict, dict, dict, dict], o: Result) -> list[Result]:
    """The baseline rows that o may match, in the baseline's order: a superset of those _same_config
    accepts.  A measured o matches measured rows of equal parameters and published rows of its case;
    a published o states only some parameters, so it meets every row of its case (published rows are
    the shipped data, not thousands of cases)."""
    measured, published, every, where = index
    case = _case(o)
    if o.source == "published":
        return [b for _, b in every.get(case, ())]
    same = measured.get((case, _params_key(o, where)), ())
    return [b for _, b in heapq.merge(same, published.get(case, ()), key=lambda x: x[0])]


def _case(r: Result) -> tuple:
    """What two compared rows share before their parameters are looked at."""
    return (r.workload, r.variant, r.size, r.gpus)


def _params_key(r: Result, where: dict) -> object:
    """A hashable form of a measured row's compared parameters: dicts equal by == give equal keys (the
    key may join unequal ones too; _same_config still decides)."""
    if r.workload not in where:
        where[r.workload] = _where(r.workload)
    return _frozen({k: v for k, v in (r.params or {}).items() if k not in where[r.workload]})


def _frozen(v) -> object:
    if isinstance(v, dict):
        return frozenset((k, _frozen(x)) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return tuple(_frozen(x) for x in v)
    try:
        hash(v)
    except TypeError:
        return "?"     # unhashable: one shared key, left to _same_config
    return v


def _same_config(b: Result, o: Result) -> bool:
    """Same workload, variant, size, GPU count and (see _params_match) parameters."""
    b_pub, o_pub = b.source == "published", o.source == "published"
    if _case(b) != _case(o):
        return False
    if b_pub and o_pub and b.origin != o.origin:
        return False    # published figures compare only within one source (one method)
    return _params_match(b.params, o.params, b_pub, o_pub, b.workload)


def _row(b: Result, o: Result, base_id: str) -> ComparisonRow:
    """One compare row: o against the baseline's b, the ratio's interval from the raw repeats."""
    b_pub, o_pub = b.source == "published", o.source == "published"
    ratio = o.throughput_median / b.throughput_median
    lo = hi = None
    xb, xo = R.per_repeat_throughput(b), R.per_repeat_throughput(o)
    if len(xb) >= 2 and len(xo) >= 2:
        _, lo, hi = ratio_ci95(xo, xb)
    flags = sorted(set(R.flags(b) + R.flags(o)))
    twins = _twins(R.gpu_of(o), base_id)
    said = outcome(lo, hi, b_pub or o_pub)
    if twins and said != CompareVerdict.NO_DIFFERENCE and abs(ratio - 1) > 0.02:
        flags.append("identical silicon: expected 1.00; the difference is the setup (clocks, power, "
                     "cooling, software), not the chip")
    return ComparisonRow(
        workload=o.workload, variant=o.variant, expected_ratio=1.0 if twins else None,
        params=dict((o.params if not o_pub else b.params) or {}),
        size=o.size, gpus=o.gpus, gpu=R.gpu_of(o), baseline_gpu=base_id,
        unit=b.unit, baseline_value=b.throughput_median, value=o.throughput_median,
        ratio=ratio, ci95_low=lo, ci95_high=hi, outcome=said,
        baseline_source=b.source, source=o.source, engine=engine_of(o),
        origin=o.origin, result_id=o.id, diverged=bool(diverged(b) or diverged(o)),
        flags=flags)


def per_result_geomean(rows: list[ComparisonRow]) -> tuple[float | None, int]:
    """(geometric mean, results counted): each result once, however many baseline rows it met (the
    H200's SD result against two published A100 rows, SDPA and xformers, weighed double before)."""
    ratios: dict = {}
    for r in rows:
        ratios.setdefault(r.result_id, []).append(r.ratio)
    return R.geomean([R.geomean(v) for v in ratios.values()]), len(ratios)


def _summary(rows: list[ComparisonRow]) -> list[ComparisonSummary]:
    summary, by_gpu = [], R.group_by(rows, lambda r: r.gpu)
    for gpu in sorted(by_gpu):
        mine = by_gpu[gpu]
        geo, n = per_result_geomean([r for r in mine if not r.diverged])
        summary.append(ComparisonSummary(
            gpu=gpu, n=n, geomean_ratio=geo, diverged_left_out=sum(r.diverged for r in mine),
            faster=sum(r.outcome == CompareVerdict.FASTER for r in mine),
            slower=sum(r.outcome == CompareVerdict.SLOWER for r in mine),
            no_difference=sum(r.outcome == CompareVerdict.NO_DIFFERENCE for r in mine),
            no_ci=sum(r.outcome.no_ci for r in mine)))
    return summary


def _twins(a: str, b: str) -> bool:
    """Same silicon by the catalog (the A800 and the A100; the H800 and the H100): physics expects 1.00."""
    from gpuarena.analysis.physics.ratio import identical_silicon

    ga, gb = catalog.find(a or ""), catalog.find(b or "")
    return bool(ga and gb and ga.name != gb.name and identical_silicon(ga, gb))
