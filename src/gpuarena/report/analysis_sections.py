"""Sections that present gpuarena.analysis and gpuarena.data: the hardware table from the
catalog, the claims, cost and advice (the comparison is in report.comparison).  The arithmetic lives there; this
module only lays their rows out as tables and charts.  Each section is left out when
its module is not installed or has nothing to say about these results."""

from __future__ import annotations


from gpuarena.analysis.rows.verdict import ClaimVerdict as V
from gpuarena.analysis.verbs import check
from gpuarena.analysis.verbs.advise import Advice, advise
from gpuarena.analysis.verbs.cost import CostRow, cost_table
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry
from gpuarena.report.model import NUMERIC, PROSE, TEXT, Section, Table, brief_params, slug
from gpuarena.numbers import fmt_num

from gpuarena.report import headline as H
from gpuarena.report.comparison import short
from gpuarena.report.first_screen import run_hint
from gpuarena.store.result import Result


def whole(x) -> str:
    return "-" if x is None else f"{x:,.0f}"


def hardware(rows: list[Result], also: list[str] = ()) -> Section | None:
    """The catalog rows of the GPUs these results ran on (the articles' section 2), then the GPUs
    they are compared with (the baseline, the published rows beside them)."""
    gpus, unknown, role = [], [], {}
    for name in [*dict.fromkeys(r.device_name for r in rows if r.device_name), *also]:
        if str(name).startswith("CPU"):
            continue
        g = catalog.find(name)
        if g is None:
            unknown.append(str(name))
        elif g not in gpus:
            gpus.append(g)
            role[g.name] = "measured here" if any(catalog.find(r.device_name or "") == g and
                                                  r.source != "published" for r in rows) else "compared"
    if not gpus and not unknown:
        return None
    s = Section("hardware", "Hardware")
    table_rows = [[g.name, role[g.name], g.architecture, f"{whole(g.memory_gb)} GB {g.memory_type}",
                   whole(g.memory_bandwidth_gbs), whole(g.nvlink_gbs), f"{g.pcie_gen:g}" if g.pcie_gen else "-",
                   whole(g.tdp_w), whole(g.sm_count), fmt_num(g.peak("fp32")), fmt_num(g.peak("tf32")),
                   fmt_num(g.peak("bf16")), fmt_num(g.peak("fp8")),
                   f"${g.purchase.usd:,.0f}" if g.purchase.usd else "-",
                   f"${g.cloud.usd:.2f}" if g.cloud.usd else "-", g.source] for g in gpus]
    s.tables.append(Table("hardware-table", [
        ("GPU", TEXT), ("in this report", TEXT), ("architecture", TEXT), ("memory", TEXT), ("memory GB/s", NUMERIC),
        ("NVLink GB/s", NUMERIC), ("PCIe gen", NUMERIC), ("TDP W", NUMERIC), ("SMs", NUMERIC), ("FP32", NUMERIC),
        ("TF32", NUMERIC), ("BF16", NUMERIC), ("FP8", NUMERIC), ("price", NUMERIC), ("cloud $/h", NUMERIC),
        ("source", TEXT)],
        table_rows, "GPUs in this report (from the catalog)",
        "Dense peak rates in TFLOP/s; NVLink is NVIDIA's total bidirectional figure per GPU; prices are "
        "detailed under Cost.", details=("architecture", "SMs", "PCIe gen")))
    if unknown:
        s.paragraphs.append("Not in the catalog (no peak rates or prices): " + ", ".join(unknown) + ".")
    return s


def jobs_in(rows: list[Result]) -> list[str]:
    """Workloads one buys a GPU for: cost per item and advice leave the device probes out."""
    return [w for w in dict.fromkeys(r.workload for r in rows if r.status == "ok")
            if not registry.is_device_probe(w)]


def _money(x, digits: int = 0) -> str:
    return "-" if x is None else f"${x:,.{digits}f}"


def _times(x) -> str:
    return "-" if x is None else f"{x:.2f}x"


def _per_gpu(x: CostRow) -> str:
    """A cost row's speed in the workload's headline unit (SD v1.5: seconds per image)."""
    if H.is_latency(x.workload) and x.throughput:
        return f"{fmt_num(1 / x.throughput)} {H.unit(x.workload, x.unit)}"
    return f"{fmt_num(x.throughput)} {x.unit or ''}".strip()


def _energy_from(basis: str) -> str:
    """The cost table's 'energy from' cell: measured or TDP, and whether a measured figure was refused
    (analysis/verbs/cost.py says why in `gpuarena cost`)."""
    return basis.split(" (")[0].split(";")[0] + (" (measured refused)" if ";" in basis else "")


def cost(pool, rows: list[Result], baseline: str | None) -> Section | None:
    """Cost and energy efficiency (analysis.cost.cost_table) of the GPUs in the report and the
    baseline, at catalog prices: per GPU and workload, the article's code (seed) at its fastest
    setting and the fastest variant."""
    jobs = jobs_in(rows)
    if not jobs:
        return None
    gpus = {catalog.identity(r.device_name) for r in rows}
    base = catalog.find(baseline) if baseline else None
    if base:
        gpus.add(base.name)
    try:
        result = cost_table(pool, baseline=base.name if base else None)
    except UserError as exc:   # e.g. no result on a catalog GPU (a CPU run)
        return Section("cost", "Cost and energy efficiency", [f"No cost table: {exc}."])
    mine = [x for x in result.rows if x.gpu in gpus and x.workload in jobs]
    picked: list[tuple[str, CostRow]] = []
    for key in dict.fromkeys((x.gpu, x.workload) for x in mine):
        these = [x for x in mine if (x.gpu, x.workload) == key]
        seed = [x for x in these if x.variant == "seed"]
        fastest = max(these, key=lambda x: x.throughput)
        if seed:
            picked.append(("article's code (seed)", max(seed, key=lambda x: x.throughput)))
        if not seed or fastest.variant != "seed":
            picked.append(("fastest variant", fastest))
    if not picked:
        return None
    picked.sort(key=lambda p: (p[1].workload, p[0] != "article's code (seed)", p[1].gpu))
    brief = brief_params([(x.workload, x.params) for _, x in picked])
    a = result.assumptions
    table_rows = [[x.workload, short(x.gpu), x.variant, params, x.source or "",
                   _per_gpu(x), _money(x.purchase_usd),
                   fmt_num(x.per_1000usd), _money(x.usd_per_million_items, 2), fmt_num(x.items_per_joule),
                   _energy_from(x.energy_basis), _money(x.tco_usd_per_million_items, 3),
                   f"{x.purchase_source}; cloud {x.cloud_source}" if x.purchase_usd or x.cloud_source else ""]
                  for (_, x), params in zip(picked, brief)]
    s = Section("cost", "Cost and energy efficiency")
    s.paragraphs.append(
        "From gpuarena cost at the catalog's prices, per GPU and workload: the article's code (seed) at its "
        f"fastest setting, and the fastest variant. Assumptions: TCO of {a.gpus} GPU over {a.years:g} "
        f"years at ${a.kwh_price}/kWh and PUE {a.pue}, hosting ${a.hosting_per_gpu_year:g}/GPU-year, "
        "100% utilisation; power is the measured mean where stored, else the TDP; items per joule come from "
        "the measured energy where there is some and the power it implies is within the card's and its own "
        "samples' reach, else throughput / TDP (the 'energy from' column). "
        "Published rows are other people's figures at other settings.")
    s.tables.append(Table("cost-table", [
        ("workload", TEXT), ("GPU", TEXT), ("variant", TEXT), ("params", TEXT), ("source", TEXT),
        ("per GPU", NUMERIC), ("price", NUMERIC), ("per s per $1k", NUMERIC), ("cloud $/M items", NUMERIC),
        ("items/J", NUMERIC), ("energy from", TEXT), ("TCO $/M items", NUMERIC), ("price source", TEXT)],
        table_rows, "Throughput per dollar and per joule",
        "Energy 'measured' is the timed window's: NVML's energy counter over a window of 11 or more of its "
        "steps, else the power sampled over it (gpuarena results --format json: energy_source, extra.energy); "
        "SD v1.5 is quoted in seconds per image, its per-dollar and per-joule figures in images.",
        details=("params", "energy from", "price source")))
    return s


def claims(pool, csv_path: str | None = None) -> Section | None:
    """The articles' claims checked against peak FLOP/s (analysis.check), with the share of
    peak measured in this database in each reason."""
    path = csv_path or str(check.ARTICLE_CLAIMS)
    try:
        checked = check.check_claims(check.read_claims(path), pool)
    except UserError as exc:
        return Section("claims", "The articles' claims", [f"Claims not checked: {exc}."])
    s = Section("claims", "The articles' claims, judged as stated")
    counts = {v: sum(c.verdict is v for c in checked) for v in (V.IMPOSSIBLE, V.IMPLAUSIBLE, V.PLAUSIBLE)}
    s.paragraphs.append(
        f"{len(checked)} claims from the articles: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        + ". Implied FLOP/s = claimed per-GPU throughput x the workload's FLOPs per item at the claim's "
        "conditions, against the peak of the precision the arithmetic executed as on that GPU; impossible = "
        "above that peak; implausible = above the tighter of the best shares of the compute peak and of the "
        "memory roof credibly reached on that workload, precision and generation, or above the card's own tuned "
        "figure (each reason names the bound that holds and its source, finite measurements in this database "
        "included); unverified = a ceiling from another generation or from framework figures alone, which "
        "only warns.")
    s.tables.append(Table("claims-table", [
        ("GPU", TEXT), ("workload", TEXT), ("judged at", TEXT), ("batch", NUMERIC), ("claimed", NUMERIC),
        ("implied TFLOP/s", NUMERIC), ("peak TFLOP/s", NUMERIC), ("of peak", NUMERIC), ("verdict", TEXT),
        ("executed as", PROSE), ("reason", PROSE)],
        [[c.gpu.replace("NVIDIA ", ""), c.workload, check.NAMES.get(c.executed, c.executed), str(c.batch_size),
          fmt_num(c.throughput) if c.scaling is None else f"scaling {c.scaling:g} at {c.gpus} GPUs",
          fmt_num(c.implied_tflops), fmt_num(c.peak_tflops),
          f"{c.share_of_peak:.0%}" if c.share_of_peak is not None else "", c.verdict.value,
          c.executed_as, c.reason.replace(f"; executed as {c.executed_as}", "")]
         for c in checked],
        "Claims checked", "Claims from data/article_claims.csv; peaks are the catalog's dense rates.",
        details=("executed as", "reason")))
    return s


ADVICE_ROWS = 5


def advice(pool, rows: list[Result]) -> Section | None:
    """The recommendation (analysis.advise) for each workload in the report: its explanation
    and the top of its ranking."""
    jobs = jobs_in(rows)
    if not jobs:
        return None
    s = Section("advice", "Recommendation")
    s.paragraphs.append(
        "From gpuarena advise: the catalog ranked by single-GPU throughput within one precision and engine class, "
        "each figure measured (here), published (someone else's, same class) or projected (roofline of compute "
        "at the executed precision, memory bandwidth and a fixed cost, calibrated on the class's results; band "
        f"from its leave-one-GPU-out validation, docs/projections.md). The top {ADVICE_ROWS} per workload; "
        "`gpuarena advise WORKLOAD` gives the whole list and takes a budget, hours and a memory floor.")
    for w in jobs:
        sub = Section(f"advice-{slug(w)}", w)
        s.subsections.append(sub)
        try:
            result = advise(pool, w)
        except UserError as exc:
            sub.paragraphs.append(f"No advice: {exc}." + ("" if registry.get(w).advised_by else
                                  f" To get it, run `{run_hint(w)}` on a GPU (a finite result at full size)."))
            continue
        sub.paragraphs.append(summary(result, w))
        unit = H.unit(w, result.rows[0].unit)
        sub.tables.append(Table(f"advice-{slug(w)}-table", [
            ("#", NUMERIC), ("GPU", TEXT), ("basis", TEXT), (unit, NUMERIC), ("$/GPU-hour", NUMERIC),
            ("items per $", NUMERIC), ("items/J (TDP)", NUMERIC), ("memory GB", NUMERIC), ("source", TEXT),
            ("note", PROSE)],
            [[str(x.rank), short(x.gpu), x.basis, in_unit(w, x.throughput),
              _money(x.price_usd / result.gpus, 2) if x.price_usd else "unpriced", fmt_num(x.per_dollar),
              fmt_num(x.items_per_joule), whole(x.memory_gb), x.source, x.note or ""]
             for x in result.rows[:ADVICE_ROWS]],
            f"Top {min(ADVICE_ROWS, len(result.rows))} of {len(result.rows)} GPUs for {w}",
            "Every row at the precision and engine named above; the source of each figure is in Sources.",
            details=("note",)))
    return s


def in_unit(workload: str, throughput: float | None) -> str:
    """A throughput in the workload's article unit (SD v1.5: seconds per image), by magnitude."""
    if not throughput:
        return "-"
    return fmt_num(1 / throughput) if H.is_latency(workload) else fmt_num(throughput)


def summary(result: Advice, workload: str) -> str:
    """advise's answer in two sentences, its figures in the article's unit."""
    rows = result.rows
    unit = H.unit(workload, rows[0].unit)
    fast = rows[0]
    out = (f"Ranked on {result.class_} figures. Fastest: the {short(fast.gpu)} at "
           f"{in_unit(workload, fast.throughput)} {unit} ({fast.basis}).")
    priced = [x for x in rows if x.per_dollar and x.price_rankable]
    if priced:
        v = max(priced, key=lambda x: x.per_dollar)
        out += (f" Most throughput per dollar of cloud time: the {short(v.gpu)}, {in_unit(workload, v.throughput)} "
                f"{unit} for {_money(v.price_usd, 2)} per hour ({v.basis}), "
                f"{v.throughput / fast.throughput:.0%} of the fastest's speed.")
    if fast.basis == "projected":
        out += " The top figure is a projection: measure before buying."
    return out
