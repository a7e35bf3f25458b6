"""One section per workload: its throughput (or latency) table, the chart against its declared
axis or of its FLOP rate, the tuning ladder and peak memory."""

from __future__ import annotations

from collections import Counter

from gpuarena.analysis.rows.common import flags as row_flags
from gpuarena.report import headline as H
from gpuarena.report.cautions import shown_flags
from gpuarena.report.chartspec import BarGroup, Series
from gpuarena.report.ladder import against_reference, tuning_ladder
from gpuarena.report.model import (MAX_ROWS, NUMERIC, PROSE, TEXT, Chart, Section, Table, catalog_share, device_of,
                                   ok, params_text, pct, prune, slug, varying_params)
from gpuarena.numbers import fmt_bytes, fmt_num
from gpuarena.store.result import Result
from gpuarena.workloads import registry


def x_key(workload: str, rows: list[Result], keys: list[str]) -> str | None:
    """The workload's declared axis, when it varies among the rows and is a number in each."""
    cls = registry.find(workload)
    k = cls.axis if cls is not None else None
    if k in keys and all(isinstance(r.params.get(k), (int, float)) and not isinstance(r.params.get(k), bool)
                         for r in rows):
        return k
    return None


def flags(r: Result) -> list[str]:
    out = shown_flags(r, row_flags(r, brief=True))
    if r.source != "measured":
        out.append(r.source)
    return out


def ci_text(thr: dict) -> str:
    lo, hi = thr.get("ci95_low"), thr.get("ci95_high")
    if lo is None or hi is None or (thr.get("n") or 0) < 2:
        return "-"
    return f"{fmt_num(lo)} – {fmt_num(hi)}"


def search_text(r: Result) -> str:
    """A search result's answer: the batch it found, and the throughput it timed there."""
    found = H.max_batch_text(r)
    if found == "-":
        return found
    steps = r.params.get("inference_steps")
    return (f"{found}: {fmt_num(r.throughput_median)} {r.unit or ''} there"
            + (f" at {steps} steps" if steps else ""))


def memory_bytes(r: Result) -> tuple[int | None, str]:
    if r.peak_memory_bytes:
        return r.peak_memory_bytes, "device"
    rss = r.extra.peak_rss_bytes
    return (rss, "process RSS") if rss else (None, "")


def workload_section(workload: str, rows: list[Result]) -> Section:
    s = Section(f"wl-{slug(workload)}", workload)
    keys = varying_params(rows)
    unit = H.unit(workload, next((r.unit for r in rows if r.unit), "items/s"))
    devices = list(dict.fromkeys(device_of(r) for r in rows))
    common = common_text(rows, keys, devices)
    if common:
        s.paragraphs.append(common)
    s.tables.append(throughput_table(s, workload, rows[:MAX_ROWS], keys, unit, devices))
    if len(rows) > MAX_ROWS:
        s.paragraphs.append(f"The table shows the first {MAX_ROWS:,} of {len(rows):,} results "
                            f"({len(rows) - MAX_ROWS:,} left out here); `gpuarena results -w {workload}` "
                            "lists them all.")
    good = [r for r in rows if ok(r)]
    xk = x_key(workload, good, keys)
    add_rate_chart(s, workload, good, keys, unit, devices, xk)
    ladder = tuning_ladder(workload, good, keys)
    if ladder:
        s.tables.append(ladder[0])
        s.charts.append(ladder[1])
    reference = against_reference(workload, good, keys)
    if reference:
        s.tables.append(reference)
    mem_rows = [r for r in good if memory_bytes(r)[0]]
    if xk and mem_rows:
        kind = memory_bytes(mem_rows[0])[1]
        s.charts.append(Chart(f"{s.id}-memory", f"Peak memory ({kind}) vs {xk}", "lines_with_ci", {
            "series": series_by(mem_rows, xk, keys, lambda r: memory_bytes(r)[0] / 2**30, lambda r: None,
                                lambda r: None),
            "xlabel": xk, "ylabel": f"GiB ({kind})", "logx": len({r.params[xk] for r in mem_rows}) > 3},
            f"{workload}: peak memory in GiB against {xk}"))
    return s


def common_text(rows: list[Result], keys: list[str], devices: list[str]) -> str:
    """What every case shares: the device (and the results' source) and the fixed parameters."""
    sources = {r.source for r in rows}
    common = []
    if len(devices) == 1:
        common.append(f"All on {devices[0]}" + (f" ({next(iter(sources))} results)" if len(sources) == 1
                                                 and None not in sources and "measured" not in sources else "") + ".")
    fixed = [k for k in rows[0].params if k not in keys]
    if fixed:
        common.append("Parameters common to every case: " + params_text(rows[0], fixed) + ".")
    usual = usual_values(rows[:MAX_ROWS], keys)
    if usual:
        common.append("Usual values, which a row's params name only where it differs: "
                      + " ".join(f"{k}={v}" for k, v in usual.items()) + ".")
    return " ".join(common)


def usual_values(rows: list[Result], keys: list[str]) -> dict:
    """Each varying parameter's value shared by more than half the rows: a row's params cell names a parameter
    only where the row differs from it (many bundles together vary many parameters; a cell naming them all
    grows taller than its row's figures)."""
    usual = {}
    for k in keys:
        seen = Counter(repr(r.params[k]) for r in rows if k in r.params)
        if seen:
            value, n = seen.most_common(1)[0]
            if 2 * n > len(rows):
                usual[k] = next(r.params[k] for r in rows if k in r.params and repr(r.params[k]) == value)
    return usual


def table_row(r: Result, keys: list[str], sources: set, usual: dict | None = None) -> list[str]:
    thr = r.throughput
    mem, _ = memory_bytes(r)
    shown = [f for f in flags(r) if len(sources) > 1 or f != r.source]
    own = [k for k in keys if not (usual and k in usual and repr(r.params.get(k)) == repr(usual[k]))]
    return [
        str(r.id), device_of(r), r.variant, params_text(r, own) or ("usual" if usual else "-"), r.precision or "-",
        fmt_num(H.value(r)) if ok(r) else r.status, ci_text(dict(zip(("ci95_low", "ci95_high"), H.interval(r)),
                                                                    n=thr.n if thr else None)),
        search_text(r), pct(thr.cv if thr else None),
        fmt_num(r.tflops), pct(catalog_share(r)), pct(r.derived.share_of_ceiling),
        fmt_bytes(mem) + (" RSS" if mem and memory_bytes(r)[1] != "device" else ""),
        fmt_num(r.power_w_mean), fmt_num(r.energy_j_per_item), ", ".join(shown),
    ]


def throughput_table(s: Section, workload: str, rows: list[Result], keys: list[str], unit: str,
                     devices: list[str]) -> Table:
    """The section's main table; a latency workload's is narrower (and may add a precision paragraph to s)."""
    latency = H.is_latency(workload)
    sources = {r.source for r in rows}
    usual = usual_values(rows, keys)
    table = prune(Table(f"{s.id}-throughput", [
        ("result", NUMERIC), ("device", TEXT), ("variant", TEXT), ("params", PROSE), ("precision", TEXT),
        (f"median {unit}", NUMERIC), ("95% CI", NUMERIC), ("largest batch that fits", PROSE), ("CV", NUMERIC),
        ("TFLOP/s", NUMERIC), ("of peak", NUMERIC), ("of matmul ceiling", NUMERIC), ("peak memory", NUMERIC),
        ("power W", NUMERIC), (f"J/{H.item(workload)}", NUMERIC), ("flags", PROSE)],
        [table_row(r, keys, sources, usual) for r in rows],
        "Latency" if latency else "Throughput",
        "TFLOP/s from the workload's FLOP count per item; 'of peak' is the share of the catalog's dense peak "
        "at the precision the recipe executed, the claim check's rule (PyTorch's default runs convolutions "
        "in TF32 on Ampere and newer, so such a share is of the TF32 peak); "
        "'of matmul ceiling' is the share of the best matmul rate measured on the same GPU. Empty columns "
        "are left out; RSS marks a CPU process's peak resident memory.",
        details=("95% CI", "largest batch that fits", "CV", "of matmul ceiling", "power W", f"J/{H.item(workload)}")))
    if len(devices) == 1:
        table = drop_column(table, "device")
    if latency:   # a narrower table: the matmul ceiling says little about a pipeline of many kernels
        # the spread is in the interval (and the noisy flag)
        table = drop_column(drop_column(drop_column(table, "of matmul ceiling"), "of peak"), "CV")
        precisions = {r.precision for r in rows}
        if len(precisions) == 1 and None not in precisions:
            table = drop_column(table, "precision")
            s.paragraphs.append(f"Precision: {next(iter(precisions))}.")
        table.note = (f"Seconds per {H.item(workload)}, as the articles quote it: a call's time over its batch; "
                      "the interval is the reciprocal of the throughput interval. A maximum-concurrency search "
                      "(search=max-batch) answers another question, at fewer denoising steps: it shows the "
                      "largest batch that fitted and its throughput there, never a latency. TFLOP/s from the "
                      "workload's FLOP count per image. Empty columns are left out.")
    if "TFLOP/s" not in [h for h, _ in table.columns]:
        table.note = "Empty columns are left out (a copy or bandwidth test has no FLOP rate)."
    return table


def add_rate_chart(s: Section, workload: str, good: list[Result], keys: list[str], unit: str,
                   devices: list[str], xk: str | None) -> None:
    """Throughput against the declared axis; else, for cases of differing shape or dtype, their FLOP rates."""
    if xk:
        s.charts.append(Chart(f"{s.id}-scaling", f"Throughput vs {xk}", "lines_with_ci", {
            "series": series_by(good, xk, keys, lambda r: r.throughput_median,
                                lambda r: r.throughput.ci95_low if r.throughput else None,
                                lambda r: r.throughput.ci95_high if r.throughput else None),
            "xlabel": xk, "ylabel": unit, "logx": len({r.params[xk] for r in good}) > 3},
            f"{workload}: {unit} against {xk}, one line per device and variant, 95% CI error bars"))
        if len(devices) == 1:
            s.charts[-1].title += f" ({devices[0]})"
    if not xk and len(good) > 1 and all(r.tflops for r in good):
        # Cases that differ in shape or dtype, not size: their FLOP rate is what compares.
        several = len({x.variant for x in good}) > 1      # once, not once per row
        cats = [" ".join(p for p in (r.variant if several else "", params_text(r, keys)) if p) or str(r.id)
                for r in good]
        s.charts.append(Chart(f"{s.id}-tflops", "Achieved TFLOP/s per case", "grouped_bars", {
            "categories": cats, "ylabel": "TFLOP/s",
            "groups": [BarGroup(d, [r.tflops if device_of(r) == d else None for r in good]) for d in devices]},
            f"{workload}: achieved TFLOP/s of each case"))


def drop_column(t: Table, name: str) -> Table:
    keep = [i for i, (header, _) in enumerate(t.columns) if header != name]
    return Table(t.id, [t.columns[i] for i in keep], [[row[i] for i in keep] for row in t.rows], t.title, t.note,
                 t.details)


def series_by(rows, xk, keys, y, lo, hi) -> list[Series]:
    """Lines keyed by device, variant and the other varying parameters; points sorted by x."""
    groups: dict[str, list[dict]] = {}
    one_device = len({device_of(r) for r in rows}) == 1     # then the chart's caption names it
    for r in rows:
        other = [k for k in keys if k != xk]
        label = " · ".join(p for p in ("" if one_device else device_of(r), r.variant, params_text(r, other)) if p)
        groups.setdefault(label, []).append(r)
    out = []
    for label, rs in groups.items():
        rs = sorted(rs, key=lambda r: r.params[xk])
        out.append(Series(label, [r.params[xk] for r in rs], [y(r) for r in rs], lo=[lo(r) for r in rs],
                          hi=[hi(r) for r in rs]))
    return out
