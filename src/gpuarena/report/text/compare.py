"""`gpuarena compare` as text: every like-for-like row with its ratio and 95% CI, then the
geometric mean per GPU."""

from __future__ import annotations

from gpuarena.analysis.rows.common import fmt_params
from gpuarena.analysis.verbs.compare import Comparison
from gpuarena.report.text.table import as_json, render as table

ROW_COLUMNS = [("workload", "workload"), ("variant", "variant"), ("params", "params"), ("gpu", "GPU"),
               ("source", "source"), ("baseline_value", "baseline"), ("value", "value"), ("unit", "unit"),
               ("ratio", "ratio"), ("ci", "95% CI"), ("verdict", "verdict"), ("flags", "flags")]
SUMMARY_COLUMNS = [("gpu", "GPU"), ("n", "results"), ("geomean_ratio", "geomean ratio"), ("faster", "faster"),
                   ("slower", "slower"), ("no_difference", "no sig. diff."), ("no_ci", "no CI")]


def render(result: Comparison, fmt: str) -> str:
    """The comparison as text: table, md or json (json = the Comparison compare() returns, dumped)."""
    if fmt == "json":
        return as_json(result.model_dump(mode="json"))
    rows = [{**r.model_dump(), "params": fmt_params(r.params), "ratio": f"{r.ratio:.3f}",
             "ci": (f"{r.ci95_low:.3f}-{r.ci95_high:.3f}" if r.ci95_low is not None else "-")}
            for r in result.rows]
    summary = [{**s.model_dump(), "geomean_ratio": f"{s.geomean_ratio:.3f}x" if s.geomean_ratio else "-"}
               for s in result.summary]
    notes = [f"skipped {s.workload} {s.variant} {fmt_params(s.params)} on {s.gpu}: {s.reason}"
             for s in result.skipped]
    b = result.baseline
    return (table(ROW_COLUMNS, rows, fmt, title=f"Compared with {b}")
            + "\n" + table(SUMMARY_COLUMNS, summary, fmt, title=f"Geometric mean of ratios to {b}", notes=notes))
