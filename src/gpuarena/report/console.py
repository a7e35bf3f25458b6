"""Console tables and the flat views of results used by `results --format`."""

from __future__ import annotations

import csv
import io
import json

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gpuarena.numbers import fmt_bytes, fmt_num
from gpuarena.textfit import (LONG_TABLE, column_widths, draw, natural_width, plain, records,
                              terminal_width)
from gpuarena.numbers import MIN_SAMPLES
from gpuarena.store.flags import FlagKind
from gpuarena.store.derived import Expected
from gpuarena.store.result import Result

PARAM_KEYS_SHOWN = 4


def fmt_params(params: dict) -> str:
    items = list((params or {}).items())[:PARAM_KEYS_SHOWN]
    return " ".join(f"{k}={v}" for k, v in items if k not in ("lr", "compile_mode") or v not in (0.1, "default"))


# `gpuarena results --format json`: the documented keys of one result, in order.  Most are the stored form's
# (``Result.row()``, what a bundle carries, exported as stored); the rest are computed in public_view.
PUBLIC_KEYS = ("id", "run_id", "source", "workload", "workload_version", "code_hash", "variant", "params", "size",
               "gpus", "status", "error", "device", "device_name", "precision", "throughput", "expected", "latency",
               "samples", "peak_memory_bytes", "tflops", "compile_s", "power_w_mean", "power_w_max",
               "energy_j_per_item", "energy_source", "temp_c_max", "sm_clock_mhz_mean", "throttled", "warnings",
               "extra", "env_id", "created_at")


def public_view(r: Result) -> dict:
    """The documented JSON shape of one result (`gpuarena results --format json`): the stored form's keys
    (a JSON boundary: exported as stored), and the derived figures."""
    d = r.row()     # the stored form, as exported; derived figures below
    own = {"throughput": d.get("throughput") or None,
           "expected": r.derived.expected.summary() if r.derived.expected is not None else None,
           "warnings": r.all_warnings,
           "extra": {k: v for k, v in r.extra_dict().items() if k not in ("traceback", "stderr_tail")}}
    return {k: own[k] if k in own else d.get(k) for k in PUBLIC_KEYS}


def to_json(results: list[Result]) -> str:
    return json.dumps([public_view(r) for r in results], indent=2, default=str)


CSV_COLUMNS = ("id", "run_id", "source", "workload", "variant", "params", "status", "device_name", "precision",
               "throughput_median", "throughput_mean", "throughput_ci95_low", "throughput_ci95_high",
               "throughput_cv", "throughput_n", "unit", "tflops", "peak_memory_bytes", "compile_s",
               "power_w_mean", "energy_j_per_item", "throttled", "warnings", "error")


def to_csv(results: list[Result]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_COLUMNS)
    for r in results:
        d = r.row()     # the stored form, as exported (a CSV boundary); the computed columns below
        t = d.get("throughput") or {}
        own = {"params": json.dumps(d.get("params"), sort_keys=True), "throughput_median": median_of(r),
               **{f"throughput_{k}": t.get(k) for k in ("mean", "ci95_low", "ci95_high", "cv", "n")},
               "warnings": "; ".join(r.all_warnings)}
        w.writerow([own[k] if k in own else d.get(k) for k in CSV_COLUMNS])
    return buf.getvalue()


# The results table's columns, most needed first; a narrow terminal drops from the end of DROPPABLE.
RESULT_COLUMNS = (("workload", "left"), ("variant", "left"), ("GPU", "left"), ("params", "left"), ("status", "left"),
                  ("throughput (median)", "right"), ("95% CI", "right"), ("vs expected", "right"), ("CV", "right"),
                  ("TFLOP/s", "right"), ("peak mem", "right"), ("power W", "right"),
                  ("J/item", "right"), ("flags", "left"))
DROPPABLE = ("J/item", "power W", "TFLOP/s", "peak mem", "CV", "params", "vs expected")


def result_cells(r: Result) -> list[str]:
    """One result as rich-markup cells in RESULT_COLUMNS order (stored strings escaped)."""
    thr = r.throughput
    kinds = {f.kind for f in r.flags}
    flags = [word for kind, word in ((FlagKind.throttled, "throttled"), (FlagKind.noisy, "noisy")) if kind in kinds]
    if thr is not None and 1 < thr.n < MIN_SAMPLES:   # the interval is shown, and read as wide
        flags.append("few repeats")
    if FlagKind.nan in kinds:
        flags.append("NaN")
    expected = r.derived.expected
    if expected is not None and expected.below:
        flags.append("below-expected")
    if r.status != "ok" and r.error:
        flags.append(" ".join(r.error.split())[:60])   # one line: a cell of a table
    gpu = str(r.device_name or "-").replace("NVIDIA ", "").replace("GeForce ", "")
    shown = thr is not None and thr.n > 1 and thr.ci95_low is not None and thr.ci95_high is not None
    ci = f"{fmt_num(thr.ci95_low)}-{fmt_num(thr.ci95_high)}" if shown else "-"
    status = "[green]ok[/]" if r.status == "ok" else f"[red]{escape(r.status)}[/]"
    return [
        escape(r.workload), escape(r.variant), escape(gpu), escape(fmt_params(r.params)), status,
        f"{fmt_num(median_of(r))} {escape(r.unit or '')}" if median_of(r) is not None else "-",
        ci,
        expected_cell(expected), f"{thr.cv:.1%}" if thr is not None and thr.cv is not None else "-",
        fmt_num(r.tflops), fmt_bytes(r.peak_memory_bytes),
        fmt_num(r.power_w_mean), fmt_num(r.energy_j_per_item), escape(", ".join(flags)),
    ]


def expected_cell(e: Expected | None) -> str:
    """'0.98x of 2,259 (published)': the measured figure over the expected one (analysis/verbs/expected.py)."""
    if e is None or not e.figure or e.ratio is None:
        return "-"
    unit = f" {escape(e.unit)}" if e.unit else ""      # a device check's figure: TFLOP/s, bus GB/s
    return f"{e.ratio:.2f}x of {fmt_num(e.figure)}{unit} ({escape(e.basis)})"


def median_of(r: Result):
    """The median throughput: from the summary, else the stored figure (a published row has no repeats)."""
    return r.throughput.median if r.throughput is not None else r.throughput_median


def _table(title, columns, rows) -> Table:
    t = Table(title=Text(title) if title else None, show_lines=False, header_style="bold")  # a path is no markup
    for col, just in columns:
        t.add_column(col, justify=just, overflow="fold")
    for cells in rows:
        t.add_row(*cells)
    return t


def fitted_results(results: list[Result], title: str | None, width: int, ascii_only: bool = False):
    """The results table at the terminal's width: optional columns dropped, else folded into
    records.  Each cell is measured once; the table is built once, for the columns that fit."""
    cells = [result_cells(r) for r in results]
    cols = list(RESULT_COLUMNS)
    if len({r.device_name for r in results}) <= 1:  # one device: the run header names it
        cols = [c for c in cols if c[0] != "GPU"]
    empty = {c for i, c in enumerate(RESULT_COLUMNS) if all(row[i] in ("-", "") for row in cells)}
    cols = [c for c in cols if c not in empty or c[0] in ("workload", "status")]
    widths = column_widths([c[0] for c in RESULT_COLUMNS], cells)
    for drop in (None, *DROPPABLE):
        if drop:
            cols = [c for c in cols if c[0] != drop]
        keep = [i for i, c in enumerate(RESULT_COLUMNS) if c in cols]
        if natural_width(_table(title, cols, []), [widths[i] for i in keep]) <= width:
            if len(cells) > LONG_TABLE:
                return draw(title, [c[0] for c in cols], [c[1] for c in cols],
                            [[plain(row[i]) for i in keep] for row in cells], [widths[i] for i in keep],
                            ascii_only)
            return _table(title, cols, [[row[i] for i in keep] for row in cells])
    lines = ([title] if title else []) + records([c[0] for c in RESULT_COLUMNS],
                                                 [[plain(c) for c in row] for row in cells], width)
    return Text("\n".join(lines))


def print_table(results: list[Result], title: str | None = None, console: Console | None = None) -> None:
    """The results at the terminal's width (`--format json|csv` keeps every column)."""
    from gpuarena.report.notes import results_notes

    con = console or Console(width=terminal_width())
    fitted = fitted_results(results, title, con.width, not con.encoding.lower().startswith("utf"))
    if isinstance(fitted, Text):   # drawn to the width already: written out, not laid out again
        con.file.write(fitted.plain + "\n")
    else:
        con.print(fitted)
    for note in results_notes(results):
        con.print(escape(note), soft_wrap=False)
