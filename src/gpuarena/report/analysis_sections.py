"""Sections that present gpuarena.analysis and gpuarena.data: the hardware table from the
catalog and the comparison against a baseline GPU.  The arithmetic lives there; this
module only lays their rows out as tables and charts.  Each section is left out when
its module is not installed or has nothing to say about these results."""

from __future__ import annotations

from gpuarena.errors import UserError
from gpuarena.report.build import NUMERIC, TEXT, Chart, Section, Table, fmt_num


def _catalog():
    try:
        from gpuarena.data import catalog
    except ImportError:
        return None
    return catalog


def whole(x) -> str:
    return "-" if x is None else f"{x:,.0f}"


def hardware(rows: list[dict]) -> Section | None:
    """The catalog rows of the GPUs these results ran on (the articles' section 2)."""
    catalog = _catalog()
    if catalog is None:
        return None
    gpus, unknown = [], []
    for name in dict.fromkeys(r.get("device_name") for r in rows if r.get("device_name")):
        if str(name).startswith("CPU"):
            continue
        g = catalog.find(name)
        if g is None:
            unknown.append(str(name))
        elif g not in gpus:
            gpus.append(g)
    if not gpus and not unknown:
        return None
    s = Section("hardware", "Hardware")
    table_rows = [[g.name, g.architecture, f"{whole(g.memory_gb)} GB {g.memory_type}",
                   whole(g.memory_bandwidth_gbs), whole(g.nvlink_gbs), f"{g.pcie_gen:g}" if g.pcie_gen else "-",
                   whole(g.tdp_w), whole(g.sm_count), fmt_num(g.peak("fp32")), fmt_num(g.peak("tf32")), fmt_num(g.peak("bf16")),
                   fmt_num(g.peak("fp8")), f"${g.purchase.usd:,.0f}" if g.purchase.usd else "-",
                   f"${g.cloud.usd:.2f}" if g.cloud.usd else "-"] for g in gpus]
    s.tables.append(Table("hardware-table", [
        ("GPU", TEXT), ("architecture", TEXT), ("memory", TEXT), ("memory GB/s", NUMERIC), ("NVLink GB/s", NUMERIC),
        ("PCIe gen", NUMERIC), ("TDP W", NUMERIC), ("SMs", NUMERIC), ("FP32 TFLOP/s", NUMERIC),
        ("TF32", NUMERIC), ("BF16", NUMERIC), ("FP8", NUMERIC), ("price", NUMERIC), ("cloud $/h", NUMERIC)],
        table_rows, "GPUs in this report (from the catalog)",
        "Dense peak rates; NVLink is NVIDIA's total bidirectional figure per GPU. Sources: "
        + "; ".join(f"{g.name}: {g.source}" for g in gpus)))
    if unknown:
        s.paragraphs.append("Not in the catalog (no peak rates or prices): " + ", ".join(unknown) + ".")
    return s


def default_baseline(rows: list[dict]) -> str | None:
    """With two or more GPUs and no --baseline: the GPU with the most ok results."""
    catalog = _catalog()
    if catalog is None:
        return None
    counts: dict[str, int] = {}
    for r in rows:
        if r.get("status") == "ok" and r.get("device_name") and not str(r["device_name"]).startswith("CPU"):
            ident = catalog.identity(r["device_name"])
            counts[ident] = counts.get(ident, 0) + 1
    return max(counts, key=lambda k: (counts[k], k)) if len(counts) > 1 else None


def comparison(store, rows: list[dict], baseline: str | None) -> Section | None:
    """Ratios to the baseline GPU with 95% intervals (analysis.compare).  An explicit
    --baseline that cannot be compared is an error; an automatic one is just left out."""
    try:
        from gpuarena.analysis.compare import compare
    except ImportError:
        if baseline:
            raise UserError("--baseline needs gpuarena.analysis.compare, which is not installed") from None
        return None
    explicit = baseline is not None
    baseline = baseline or default_baseline(rows)
    if not baseline:
        return None
    try:
        result = compare(store, baseline)
    except UserError:
        if explicit:
            raise
        return None
    b = result["baseline"]
    s = Section("comparison", f"Comparison with {b}")
    s.tables.append(Table("compare-summary", [("GPU", TEXT), ("configs", NUMERIC), ("geomean ratio", NUMERIC),
                                              ("faster", NUMERIC), ("slower", NUMERIC), ("no sig. diff.", NUMERIC),
                                              ("no CI", NUMERIC)],
                          [[x["gpu"], str(x["n"]), f"{x['geomean_ratio']:.3f}x" if x.get("geomean_ratio") else "-",
                            str(x["faster"]), str(x["slower"]), str(x["no_difference"]), str(x["no_ci"])]
                           for x in result["summary"]], f"Geometric mean of ratios to {b}"))
    rows_out = []
    for x in result["rows"]:
        ci = f"{x['ci95_low']:.3f} – {x['ci95_high']:.3f}" if x.get("ci95_low") is not None else "-"
        rows_out.append([x["workload"], x["variant"], x["params"], x["gpu"], x.get("source") or "",
                         fmt_num(x["baseline_value"]), fmt_num(x["value"]), x.get("unit") or "",
                         f"{x['ratio']:.3f}", ci, x["verdict"], "; ".join(x.get("flags") or [])])
    s.tables.append(Table("compare-table", [
        ("workload", TEXT), ("variant", TEXT), ("params", TEXT), ("GPU", TEXT), ("source", TEXT),
        (b, NUMERIC), ("value", NUMERIC), ("unit", TEXT), ("ratio", NUMERIC), ("95% CI", NUMERIC),
        ("verdict", TEXT), ("flags", TEXT)], rows_out, f"Ratio to {b}",
        "A ratio is called faster or slower only when its 95% interval excludes 1."))
    for sk in result.get("skipped") or []:
        s.paragraphs.append(f"Not compared: {sk['workload']} {sk['variant']} {sk['params']} on {sk['gpu']}: "
                            f"{sk['reason']}.")
    cats = list(dict.fromkeys(f"{x['workload']} {x['variant']} {x['params']}" for x in result["rows"]))[:16]
    groups = []
    for gpu in dict.fromkeys(x["gpu"] for x in result["rows"]):
        mine = {f"{x['workload']} {x['variant']} {x['params']}": x for x in result["rows"] if x["gpu"] == gpu}
        groups.append({"label": gpu, "values": [mine[c]["ratio"] if c in mine else None for c in cats],
                       "lo": [mine[c].get("ci95_low") if c in mine else None for c in cats],
                       "hi": [mine[c].get("ci95_high") if c in mine else None for c in cats]})
    s.charts.append(Chart("compare-chart", f"Throughput ratio to {b}", "grouped_bars",
                          {"categories": cats, "groups": groups, "ylabel": f"ratio to {b}", "ref": 1.0},
                          f"ratio of each GPU's throughput to {b} per configuration, 95% CI error bars"))
    return s
