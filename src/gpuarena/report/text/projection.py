"""`gpuarena advise --validate` as text: the projection model's held-out errors per path, and
how its ranking compares with ranking by datasheet bandwidth alone."""

from __future__ import annotations

from gpuarena.analysis.verbs.projection_check import ErrorSummary, Validation
from gpuarena.data import catalog
from gpuarena.report.text.table import as_json, render as table

VALIDATION_COLUMNS = [("path", "path"), ("workload", "workload"), ("precision", "precision"), ("gpu", "GPU"),
                      ("reference", "from"), ("published", "published"), ("predicted", "predicted"),
                      ("error", "error"), ("source", "source")]


def _short(name):
    g = catalog.find(name) if name else None
    return g.short if g else name


def _line(name: str, s: ErrorSummary) -> str:
    if not s.n:
        return f"{name}: no points"
    return (f"{name}: n = {s.n}, median {s.median_abs_pct_error:.1f}%, p80 {s.p80_abs_pct_error:.1f}%, "
            f"max {s.max_abs_pct_error:.1f}%")


def render_validation(result: Validation, fmt: str) -> str:
    """What analysis.projection_check.validate() returns, as text."""
    if fmt == "json":
        return as_json(result)
    rows = [{**r.model_dump(), "gpu": _short(r.gpu), "reference": _short(r.reference), "error": f"{r.pct_error:+.0f}%"}
            for r in result.rows if not r.path.startswith("deployed")]
    left = result.holdout_training_without_evidence
    notes = [_line("deployed path (one reference, target's die out of the shape; data-centre cards)", result.deployed),
             _line("deployed path with consumer cards as reference or target", result.deployed_with_consumer_cards),
             _line("fitted path (leave one die out)", result.fitted),
             _line("hold-out cross-GPU ratios", result.holdout),
             _line("power-limited siblings (PCIe / SXM of one silicon, their die out of the fit)", result.siblings),
             _line("LLM training tokens/s, each published run held out of the MFU evidence (data/training_mfu.csv)",
                   result.holdout_training)
             + (f"; {len(left)} run(s) left without comparable evidence (the plan asks for --mfu)" if left else ""),
             _line("LLM serving tokens/s at the median share of the other published rows (one share does not "
                   "carry between engines, batches and lengths: the serving model bounds a figure, it does not predict "
                   "another engine's)",
                   result.holdout_serving)
             + f"; the ceiling built without each row rejects {result.holdout_serving_ceiling_rejects} of "
               f"{result.holdout_serving.n}",
             f"Spearman {result.spearman:.2f} against {result.bandwidth_only_spearman:.2f} for ranking by "
             "datasheet bandwidth alone" if result.spearman is not None else "Spearman: too few points",
             result.form_chosen_on]
    return table(VALIDATION_COLUMNS, rows, fmt, title="Projection model, held out", notes=notes)
