"""The first screen: what a GPU buyer reads in ten seconds.  Which GPUs were measured; per
workload the best finite figure in the article's unit beside what it should be (a published
like-for-like figure that passes gpuarena check) and the decision (gpuarena advise); one chart
of speed relative to the measured GPU; and only the cautions that change how a figure may be
used.  A diverged (NaN) result never appears here: where a workload has only those, the row
says what to run to get a finite one."""

from __future__ import annotations

from typing import NamedTuple

from gpuarena.analysis.physics import models
from gpuarena.store.flags import diverged
from gpuarena.analysis.physics.roofline import is_finite_result
from gpuarena.analysis.physics import projection as J
from gpuarena.analysis.rows import common as R
from gpuarena.analysis.rows.engine import engine_of
from gpuarena.analysis.verbs.advise import SETTINGS, Advice, AdviceRow, advise, candidates
from gpuarena.analysis.rows.mfu import mfu
from gpuarena.analysis.rows.precision import request_of_variants
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.report import headline as H
from gpuarena.report.cautions import caution_counts
from gpuarena.report.chartspec import BarGroup
from gpuarena.report.model import NUMERIC, PROSE, TEXT, Chart, Section, Table, ok, params_text, pct
from gpuarena.numbers import fmt_num
from gpuarena.workloads import registry
from gpuarena.store.derived import Expected
from gpuarena.store.result import Result


def short(gpu: str) -> str:
    return catalog.match(gpu).short if catalog.find(gpu) else str(gpu).replace("NVIDIA ", "", 1)


def finite(r: Result) -> bool:
    """A measured result a headline may show: the decisions' own rule (physics.is_finite_result), no search."""
    return is_finite_result(r) and not R.is_search(r) and r.source != "published"


def figure(r: Result) -> tuple[float, str]:
    """A result's headline figure and its text, in the article's unit (per GPU where several ran)."""
    extra = r.extra
    if extra.tokens_per_s_per_gpu:   # a workload that reports per GPU (llm-train)
        v = extra.tokens_per_s_per_gpu
        return v, f"{fmt_num(v)} tokens/s per GPU" + (f", MFU {pct(mfu(r))}" if mfu(r) else "")
    if wrapper(r.workload) and r.derived.scaling_efficiency:
        v = r.derived.scaling_efficiency
        model = r.params.get("model")
        return v, f"{v:.3f} scaling efficiency at {r.gpus} GPUs" + (f" ({model})" if model else "")
    return H.value(r), H.text(r)


def wrapper(workload: str) -> bool:
    """A multi-GPU wrapper of another workload (ddp-train): its figure is the scaling efficiency."""
    return models.DATA_PARALLEL.judges(workload)


def best_finite(rows: list[Result]) -> Result | None:
    good = [r for r in rows if finite(r) and H.value(r) is not None]
    if not good:
        return None
    scaled = [r for r in good if r.gpus > 1 and r.derived.scaling_efficiency]
    if wrapper(good[0].workload) and scaled:
        good = scaled
    key = lambda r: figure(r)[0]   # noqa: E731
    return min(good, key=key) if H.better(good[0].workload) == "min" else max(good, key=key)


def like_class(r: Result) -> tuple:
    """What a published figure must share with a measured result to be like-for-like (as advise
    classes its candidates): the precision class, the engine class and the workload's settings."""
    variants = frozenset(r.variant.split("+"))
    params = r.params
    return (J.request_class(request_of_variants(variants, r.precision)),
            engine_of(r),
            tuple((k, params.get(k)) for k in SETTINGS if params.get(k) is not None))


class Expectation(NamedTuple):
    """What a measured result should be, in the article's unit: the figure, its text and where it comes from;
    ``model``: gpuarena's model (context, never a flag)."""

    value: float
    text: str
    source: str
    model: bool = False


def expected_figure(pool, r: Result) -> Expectation | None:
    """What the measured result `r` should be (analysis.expected: the same recipe stored on the same GPU
    model, else the best like-for-like published figure, else gpuarena's model capped by physics); when
    that has nothing, the best published figure on the same GPU and class that check calls plausible.
    None when neither gives one."""
    if wrapper(r.workload):      # its first-screen figure is a scaling efficiency, not items/s
        return None
    e = None
    try:
        from gpuarena.analysis.verbs import expected as E
        from gpuarena.analysis.rows.published import published_results

        raw = E.expect(r, pool.results(workload=r.workload, status="ok"), published_results())
        e = Expected.model_validate(raw) if raw else None     # as a result's derived ``expected`` holds it
    except (UserError, KeyError, TypeError, ValueError):
        e = None
    if e and e.figure and r.source != "published" and not e.unit:   # unit: a device figure
        ref = e.published if e.basis == "published" else e.stored if e.basis == "stored" else None
        src = (ref.source if ref else None) or f"gpuarena's model ({e.model.how})"
        v = e.figure
        src = f"{e.basis}: {src}"
        model = e.basis not in ("published", "stored")     # gpuarena's model: context, never a flag
        mark = " (model, context)" if model else ""
        if H.is_latency(r.workload):
            return Expectation(1.0 / v, f"{fmt_num(1.0 / v)} {H.unit(r.workload, None)}{mark}", src, model)
        return Expectation(v, f"{fmt_num(v)} {r.unit or ''}".strip() + mark, src, model)
    try:
        cands = candidates(pool, r.workload)
    except UserError:
        return None
    same = [c for c in cands if c["basis"] == "published" and c["gpu"].name == R.gpu_of(r)
            and c["class"] == like_class(r)]
    if not same:
        return None
    c = max(same, key=lambda c: c["throughput"])
    if H.is_latency(r.workload):
        v = 1.0 / c["throughput"]
        return Expectation(v, f"{fmt_num(v)} {H.unit(r.workload, None)}", c["source"])
    return Expectation(c["throughput"], f"{fmt_num(c['throughput'])} {c['unit'] or ''}".strip(), c["source"])


def against_expected(pool, best: Result, mine: list[Result]) -> tuple[Result | None, Expectation | None]:
    """The expected figure of the best result, else of the fastest finite result that has one
    (a published figure of another engine is compared with our run of that engine, not the best)."""
    order = sorted((r for r in mine if finite(r) and H.value(r) is not None), key=lambda r: figure(r)[0],
                   reverse=H.better(best.workload) == "max")
    model = None      # gpuarena's model figure is context: a like-for-like reference of another result first
    for r in [best] + [r for r in order if r is not best]:
        exp = expected_figure(pool, r)
        if exp and not exp.model:
            return r, exp
        model = model or (exp and (r, exp))
    return model or (None, None)


def decision(pool, workload: str, measured: dict | None) -> tuple[str, Advice | None]:
    """The advice in one line, and the advise result (for the chart)."""
    cls = registry.find(workload)
    if wrapper(workload):
        return "see Multi-GPU: scaling measured beside the interconnect model", None
    if cls is not None and cls.advised_by:
        return f"see {cls.advised_by.split(';')[0]}" if "Serving" not in cls.advised_by else \
            "see the Serving section (memory and bandwidth model)", None
    try:
        result = advise(pool, workload)
    except UserError as exc:
        if measured is None:
            return f"no advice: no finite result; run `{run_hint(workload)}`", None
        why = "" if "no finite measured" in str(exc) else f" ({str(exc).removesuffix('.')})"
        return (f"no advice yet{why}: measure at full size on a GPU (`{run_hint(workload)}`) or load published "
                "figures (`gpuarena import --published`)"), None
    rows = result.rows
    fast = rows[0]
    here = next((x for x in rows if measured and x.gpu == R.gpu_of(measured)), None)
    text = f"fastest {short(fast.gpu)}"
    if here and here is not fast:
        text += f": {fast.throughput / here.throughput:.2f}x ours"
    text += f" ({band_text(fast, here)})"
    priced = [x for x in rows if x.per_dollar and x.price_rankable]
    if priced:
        v = max(priced, key=lambda x: x.per_dollar)
        text += f"; per $ of cloud time: {short(v.gpu)} ({band_text(v, here)})"
    return text, result


def band_text(x: AdviceRow, here: AdviceRow | None) -> str:
    """A ranked row's basis, and for a projection its band (relative to ours where we measured) and, where it
    sits on a cap or on the compute-peak ratio, that it is an upper bound (issue 39: the B200 printed at
    exactly the BF16 peak ratio for four unlike workloads, as if measured)."""
    if x.basis != "projected" or x.low is None or x.high is None:
        return x.basis
    ref = here.throughput if here and here is not x else None
    lo, hi = (x.low / ref, x.high / ref) if ref else (x.low, x.high)
    band = f"{lo:.2f}-{hi:.2f}x" if ref else f"{fmt_num(lo)}-{fmt_num(hi)}"
    return f"projected, {band}" + (f"; at {x.upper_bound}: upper bound" if x.upper_bound else "")


def setting_text(r: Result) -> str:
    """The variant, the batch and every parameter set away from the workload's default (the finite ResNet-50
    recipe says loss=cross-entropy)."""
    p = r.params
    try:
        defaults = registry.get(r.workload).resolve_params({}, size=r.size)
    except UserError:
        defaults = {}
    keys = ["batch_size"] * bool(p.get("batch_size")) + [k for k in p if k != "batch_size" and k in defaults
                                                          and p[k] != defaults[k]]
    return r.variant + (f", {params_text(r, keys)}" if keys else "")


def run_hint(workload: str) -> str:
    extra = registry.fact(workload, "finite_fix")   # the finite recipe beside the article's
    return f"gpuarena run -w {workload}" + (f" {extra}" if extra else "")


def answer(pool, rows: list[Result], jobs: list[str], comparison: Section | None) -> Section:
    s = Section("answer", "The answer")
    measured = [r for r in rows if r.source != "published"]
    gpus = list(dict.fromkeys(R.gpu_of(r) for r in measured if ok(r)))
    counts = {g: sum(1 for r in measured if R.gpu_of(r) == g) for g in gpus}
    multi = sorted({r.gpus for r in measured if ok(r)} - {1})
    s.paragraphs.append(
        "Measured here: " + "; ".join(f"{short(g)} ({counts[g]} results)" for g in gpus)
        + (f", also {', '.join(str(n) for n in multi)} GPUs together for the multi-GPU workloads" if multi else "")
        + ". Below, per workload: the best finite figure measured, in the workload's article unit, beside what "
        "it should be and the decision.")
    table, chart_rows = [], []
    for w in jobs:
        mine = [r for r in rows if r.workload == w and r.source != "published"]
        best = best_finite(mine)
        dec, result = decision(pool, w, best)
        if best is None:
            wrong = any(diverged(r) for r in mine)
            table.append([w, "no finite result" + (" (the article's recipe diverged)" if wrong else ""),
                          "-", "-", dec, "", "", ""])
            continue
        v, text = figure(best)
        compared, exp = against_expected(pool, best, mine)
        vs = "-"
        if exp:
            cv = figure(compared)[0]
            ratio = exp.value / cv if H.better(w) == "min" else cv / exp.value
            vs = f"{ratio:.2f}x" + ("" if compared is best else "*")
        table.append([w, text, exp.text if exp else "-", vs, dec, setting_text(best),
                      "" if not exp or compared is best else f"{figure(compared)[1]} ({setting_text(compared)})",
                      exp.source if exp else ""])
        if result:
            chart_rows.append((w, best, result))
    s.tables.append(Table("answer-table", [("workload", TEXT), ("measured here", PROSE), ("expected", TEXT),
                                           ("vs expected", NUMERIC), ("decision", PROSE), ("setting", TEXT),
                                           ("* compares", TEXT), ("expected from", TEXT)], table,
                          "", "Expected: the best published figure for the same GPU that gpuarena check calls "
                          "plausible, like-for-like (same precision class, engine and settings; batch sizes may "
                          "differ). * the ratio compares the published figure with our run of its engine and "
                          "precision, not with the best. Decision: gpuarena advise, detailed under Recommendation.",
                          details=("setting", "* compares", "expected from")))
    notes: list[str] = []
    if comparison is not None:
        here = set(gpus)
        for x in [x for x in comparison.data.get("summary", []) if x.gpu in here]:
            base = comparison.data["baseline"]
            if x.geomean_ratio:
                notes.append(
                    f"{short(x.gpu)} against {short(base)}: {x.geomean_ratio:.2f}x, the geometric mean of "
                    f"{x.n} ratio{'s' if x.n != 1 else ''}"
                    + (f" ({x.out} left out: a baseline check rejects, or a diverged run)" if x.out else "") + ".")
    cautions = caution_counts(measured)
    if cautions:
        notes.append("Use with care: " + "; ".join(f"{n} {what}" for what, n in cautions) + " (see Warnings).")
    s.paragraphs += notes
    chart = relative_chart(chart_rows)
    if chart:
        s.charts.append(chart)
    return s


def relative_chart(chart_rows: list[tuple[str, Result, Advice]]) -> Chart | None:
    """Lambda's chart: per workload, speed relative to the GPU measured here (= 1), for the GPUs
    the decision names (the fastest, the best per dollar)."""
    named: list[str] = []
    for _, best, result in chart_rows:
        here = R.gpu_of(best)
        if here not in named:
            named.insert(0, here)
        rows = result.rows
        priced = [x for x in rows if x.per_dollar and x.price_rankable]
        for x in [rows[0]] + ([max(priced, key=lambda x: x.per_dollar)] if priced else []):
            if x.gpu not in named:
                named.append(x.gpu)
    named = named[:4]
    cats = []
    groups = {g: BarGroup(short(g) + (" (measured)" if i == 0 else ""), [], lo=[], hi=[], upper=[])
              for i, g in enumerate(named)}
    for w, best, result in chart_rows:
        by = {x.gpu: x for x in result.rows}
        here = by.get(R.gpu_of(best))
        if not here:
            continue
        cats.append(w)
        for g in named:
            x, col = by.get(g), groups[g]
            for into, v in ((col.values, x and x.throughput), (col.lo, x and x.low), (col.hi, x and x.high)):
                into.append(v / here.throughput if v is not None else None)
            col.upper.append(bool(x and x.upper_bound))
    if not cats or len(named) < 2:
        return None
    return Chart("answer-chart", f"Speed relative to the {short(named[0])} measured here (= 1)", "hbars",
                 {"compact": True, "categories": cats,
                  "groups": list(groups.values()),
                  "xlabel": f"speed relative to the {short(named[0])}", "ref": 1.0},
                 "per workload, each GPU's speed from gpuarena advise relative to the GPU measured here; a "
                 "projection with its band, marked ≤ where it is an upper bound (on a ceiling or at the "
                 "compute-peak ratio)")
