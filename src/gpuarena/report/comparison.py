"""The comparison with a baseline GPU (analysis.compare), laid out for the report, counting
only what may be counted: a published figure enters the geometric mean only when gpuarena's
own claim check (analysis.check) calls it plausible, and a ratio involving a diverged (NaN)
result never does.  Rows left out stay in the table, marked with the reason."""

from __future__ import annotations

from pydantic import BaseModel

from gpuarena.analysis.rows import common as R
from gpuarena.analysis.verbs.advise import request_of_published
from gpuarena.analysis.verbs.check import check_claim
from gpuarena.analysis.rows.verdict import CompareVerdict
from gpuarena.analysis.verbs.compare import ComparisonRow, compare_rows, per_result_geomean
from gpuarena.analysis.rows.common import natural_key
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.report import headline as H
from gpuarena.report.cautions import at_power_cap_only
from gpuarena.report.chartspec import BarGroup
from gpuarena.report.model import MAX_ROWS, NUMERIC, TEXT, Chart, Section, Table, brief_params, prune
from gpuarena.numbers import fmt_num
from gpuarena.store.result import Result


MAX_SKIPPED = 50


class CountedRow(ComparisonRow):
    """A compare row as the report shows it: with why it is left out of the geometric mean ('' when counted)."""

    left_out: str = ""


class CountedSummary(BaseModel):
    """Per GPU in the report: the geometric mean of the counted ratios, how many were faster, slower, left out."""

    gpu: str
    n: int
    out: int
    geomean_ratio: float | None
    faster: int
    slower: int


def every_row(b: str) -> str:
    """The command that prints the whole comparison."""
    return f"`gpuarena compare --baseline \"{b}\" --format md`"


def short(gpu: str) -> str:
    """A catalog name without the maker's prefix, for table cells."""
    return str(gpu).replace("NVIDIA ", "", 1)


def default_baseline(rows: list[Result]) -> str | None:
    """With two or more GPUs and no --baseline: the GPU with the most ok results."""
    counts: dict[str, int] = {}
    for r in rows:
        if r.status == "ok" and r.device_name and not str(r.device_name).startswith("CPU"):
            ident = catalog.identity(r.device_name)
            counts[ident] = counts.get(ident, 0) + 1
    return max(counts, key=lambda k: (counts[k], k)) if len(counts) > 1 else None


def published_verdict(pool, gpu: str, workload: str, precision: str | None, params: dict, value: float) -> str:
    """gpuarena check's verdict on a published figure, judged as stated (as advise judges its candidates)."""
    g = catalog.find(gpu)
    if g is None:
        return "not checked (GPU not in the catalog)"
    p = params or {}
    try:
        return check_claim({"gpu": g.name, "workload": workload, "precision": request_of_published(precision),
                            "batch_size": p.get("batch_size") or 1, "throughput": value,
                            **{k: p.get(k) for k in ("seq_len", "image_size")},
                            "steps": p.get("inference_steps")}, pool).verdict
    except UserError as exc:
        return f"not checked ({exc})"


def counted(pool, x: ComparisonRow, precision_of) -> str:
    """'' when a compare row may enter the geometric mean, else why not."""
    if "NaN" in x.flags:
        return "diverged (NaN)"
    for side, source, gpu, value in (("baseline_source", x.baseline_source, x.baseline_gpu, x.baseline_value),
                                     ("source", x.source, x.gpu, x.value)):
        if source == "published":
            v = published_verdict(pool, gpu, x.workload, precision_of(x, side), x.params, value)
            if v != "plausible":
                return f"{'baseline' if side == 'baseline_source' else 'figure'} {v} (check)"
    return ""


def comparison(pool, rows: list[Result], baseline: str | None) -> Section | None:
    """Ratios to the baseline GPU with 95% intervals.  An explicit --baseline that cannot be
    compared is an error; an automatic one is just left out."""
    explicit = baseline is not None
    baseline = baseline or default_baseline(rows)
    if not baseline:
        return None
    try:
        result = compare_rows(pool.results(status="ok"), baseline)
    except UserError:
        if explicit:
            raise
        return None
    b = result.baseline
    marked = mark_rows(pool, result.rows)
    s = Section("comparison", f"Comparison with {b}")
    s.data["summary"] = summarise(marked)   # read by the first screen
    s.tables.append(summary_table(s.data["summary"], b))
    ordered = sorted(marked, key=lambda x: (x.workload, x.variant != "seed", x.variant,
                                            natural_key(R.fmt_params(x.params)), x.gpu))
    brief = brief_params([(x.workload, x.params) for x in ordered])
    s.data["baseline"], s.data["gpus"] = b, list(dict.fromkeys(short(x.gpu) for x in ordered))  # read by gather
    s.tables.append(ratio_table(ordered[:MAX_ROWS], brief, b))
    if len(ordered) > MAX_ROWS:
        s.paragraphs.append(f"The table shows the first {MAX_ROWS:,} of {len(ordered):,} compared rows "
                            f"({len(ordered) - MAX_ROWS:,} left out here; the summary above counts them "
                            f"all); {every_row(b)} lists every row.")
    if any(x.baseline_source == "published" or x.source == "published" for x in marked):
        s.paragraphs.append(
            "Rows marked published are other people's figures, not measured here, so they carry no interval. "
            "Each is judged by gpuarena check at its stated precision; a ratio against a figure check calls "
            "impossible or implausible is not a speed-up, and is left out of the mean.")
    skipped = result.skipped
    for sk in skipped[:MAX_SKIPPED]:
        s.paragraphs.append(f"Not compared: {sk.workload} {sk.variant} {R.fmt_params(sk.params)} on "
                            f"{sk.gpu}: {sk.reason}.")
    if len(skipped) > MAX_SKIPPED:
        s.paragraphs.append(f"{len(skipped) - MAX_SKIPPED:,} more configurations not compared; "
                            f"{every_row(b)} names each with its reason.")
    chart = ratio_chart(ordered, brief, b)
    if chart:
        s.charts.append(chart)
    return s


def mark_rows(pool, compared: list[ComparisonRow]) -> list[CountedRow]:
    """Each compare row with its left_out reason, less a throttled flag that no slowed result explains."""
    published = {(R.gpu_of(r), r.workload, r.variant, r.throughput_median): r.precision
                 for r in pool.results(status="ok") if r.source == "published"}

    def precision_of(x: ComparisonRow, side: str) -> str | None:
        gpu, value = (x.baseline_gpu, x.baseline_value) if side == "baseline_source" else (x.gpu, x.value)
        return published.get((gpu, x.workload, x.variant, value))

    # "throttled" by the power cap alone is the card at its normal limit: not flagged
    slowed = {(R.gpu_of(r), r.workload) for r in pool.results(status="ok")
              if r.throttled and not at_power_cap_only(r)}
    marked = []
    for x in compared:
        left_out = counted(pool, x, precision_of)
        flags = x.flags if {(x.gpu, x.workload), (x.baseline_gpu, x.workload)} & slowed else \
            [f for f in x.flags if f != "throttled"]
        marked.append(CountedRow(**{**dict(x), "flags": flags, "left_out": left_out}))
    return marked


def summarise(compared: list[CountedRow]) -> list[CountedSummary]:
    """Per GPU: the geometric mean of the counted ratios, how many were faster, slower, left out."""
    summary, by_gpu = [], R.group_by(compared, lambda x: x.gpu)
    for gpu in sorted(by_gpu):
        mine = by_gpu[gpu]
        kept = [x for x in mine if not x.left_out]
        geo, n = per_result_geomean(kept)
        summary.append(CountedSummary(gpu=gpu, n=n, out=len(mine) - len(kept), geomean_ratio=geo,
                                      faster=sum(x.outcome == CompareVerdict.FASTER for x in kept),
                                      slower=sum(x.outcome == CompareVerdict.SLOWER for x in kept)))
    return summary


def summary_table(summary: list[CountedSummary], b: str) -> Table:
    return Table("compare-summary", [("GPU", TEXT), ("results counted", NUMERIC), ("geomean ratio", NUMERIC),
                                     ("faster", NUMERIC), ("slower", NUMERIC), ("left out", NUMERIC)],
                 [[short(x.gpu), str(x.n), f"{x.geomean_ratio:.3f}x" if x.geomean_ratio else "-",
                   str(x.faster), str(x.slower), str(x.out)] for x in summary],
                 f"Geometric mean of ratios to {b}",
                 "Left out of the mean: ratios against a published figure that gpuarena check does not "
                 "call plausible, and ratios involving a diverged (NaN) result.")


def ratio_table(ordered: list[CountedRow], brief: list[str], b: str) -> Table:
    rows_out = []
    for x, params in zip(ordered, brief):
        ci = f"{x.ci95_low:.3f} – {x.ci95_high:.3f}" if x.ci95_low is not None else "-"
        base_v, value, unit = x.baseline_value, x.value, x.unit or ""
        if H.is_latency(x.workload):      # SD v1.5 in its article's unit; the ratio stays a speed ratio
            base_v, value, unit = 1 / base_v, 1 / value, H.unit(x.workload, unit)
        rows_out.append([x.workload, x.variant, params, short(x.gpu), x.source or "",
                         fmt_num(base_v), fmt_num(value), unit,
                         f"{x.ratio:.3f}", ci, x.verdict, x.left_out or "counted",
                         "; ".join(f for f in x.flags if f != "NaN")])
    return prune(Table("compare-table", [
        ("workload", TEXT), ("variant", TEXT), ("params", TEXT), ("GPU", TEXT), ("source", TEXT),
        (short(b), NUMERIC), ("value", NUMERIC), ("unit", TEXT), ("ratio", NUMERIC), ("95% CI", NUMERIC),
        ("verdict", TEXT), ("in the mean", TEXT), ("flags", TEXT)], rows_out, f"Ratio to {b}",
        "Ratios are of speed (for SD v1.5, shown in seconds per image, the inverse of the times). "
        "A ratio is called faster or slower only when its 95% interval excludes 1; a published figure has no "
        "repeats, so no interval. Parameters not shown are the workload's defaults (see its section).",
        details=("source", "95% CI", "flags")))


def ratio_chart(ordered: list[CountedRow], brief: list[str], b: str) -> Chart | None:
    """The counted ratios as grouped bars, at most 16 configurations."""
    kept = [x for x in ordered if not x.left_out]
    label = {id(x): f"{x.workload} {x.variant} {p}" for x, p in zip(ordered, brief)}
    cats = list(dict.fromkeys(label[id(x)] for x in kept))[:16]
    groups = []
    for gpu, theirs in R.group_by(kept, lambda x: x.gpu).items():
        mine = {label[id(x)]: x for x in theirs}
        groups.append(BarGroup(short(gpu), [mine[c].ratio if c in mine else None for c in cats],
                               lo=[mine[c].ci95_low if c in mine else None for c in cats],
                               hi=[mine[c].ci95_high if c in mine else None for c in cats]))
    if not cats:
        return None
    return Chart("compare-chart", f"Throughput ratio to {b} (rows counted in the mean)", "grouped_bars",
                 {"categories": cats, "groups": groups, "ylabel": f"ratio to {short(b)}", "ref": 1.0},
                 f"ratio of each GPU's throughput to {b} per configuration, 95% CI error bars")
