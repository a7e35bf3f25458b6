"""`advise --validate` holds the LLM models out against published figures (analysis/verbs/llm_holdout.py)."""

from gpuarena.analysis.verbs import llm_holdout, projection_check
from gpuarena.data.training_evidence import training_runs


def test_each_training_run_is_predicted_from_the_others_within_the_projection_bar():
    rows, apart = llm_holdout.training()
    assert len(rows) + len(apart) == len(training_runs())
    assert rows and all(r["predicted_mfu"] != r["mfu"] or r["published"] == r["predicted"] for r in rows)
    errors = sorted(abs(r["pct_error"]) for r in rows)
    assert errors[len(errors) // 2] <= 15 and errors[-1] <= 35, errors


def test_no_published_serving_figure_is_rejected_by_the_ceiling_built_without_it():
    rows, rejected = llm_holdout.serving()
    assert len(rows) >= 20 and rejected == 0
    assert all(r["share"] <= r["held_out_ceiling"] for r in rows)


def test_validate_reports_both_holdouts():
    v = projection_check.validate()
    assert v.holdout_training.n >= 15 and v.holdout_serving.n >= 20
    assert v.holdout_serving_ceiling_rejects == 0
    assert v.deployed.median_abs_pct_error <= 15 and v.deployed.max_abs_pct_error <= 35
