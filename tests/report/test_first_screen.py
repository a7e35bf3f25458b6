"""The first screen and what feeds it: the best finite figure beside its expected figure and the
decision; a workload with only diverged results says what to run; sources become footnotes;
comparison means count only baselines that pass gpuarena check; warnings grouped by kind."""

from __future__ import annotations

import json

from gpuarena.runner.plan import default_suite
from gpuarena.report.build import gather
from gpuarena.report.cautions import caution_counts, grouped
from gpuarena.analysis.rows.verdict import CompareVerdict
from gpuarena.analysis.verbs.compare import ComparisonRow
from gpuarena.report.comparison import counted, published_verdict
from gpuarena.report.analysis_sections import in_unit
from gpuarena.report.footnotes import footnote
from gpuarena.report.model import Report, Section, Table
from gpuarena.numbers import fmt_num
from gpuarena.report.run_sections import collapse
from gpuarena.spec.suite import load_suite
from gpuarena.store.db import Store


def answer_rows(store) -> dict[str, list[str]]:
    report = gather(store)
    first = report.sections[0]
    assert first.id == "answer"
    return {row[0]: row for row in first.tables[0].rows}


def test_answer_shows_the_best_finite_figure_in_the_article_unit(report_db):
    rows = answer_rows(Store(report_db))
    assert rows["resnet50-train"][1] == "5,926 images/s"         # amp-bf16 at batch 256: 256 / 0.0432 s
    assert rows["sd15-generate"][1] == "0.418 s/image"
    assert rows["resnet50-train"][4].startswith("fastest ")     # the decision, from gpuarena advise
    assert rows["sd15-generate"][4].startswith("fastest ")      # every single-GPU job the run measured has one


def test_a_workload_with_only_diverged_results_says_what_to_run(report_db):
    store = Store(report_db)
    for rid, extra in store.conn.execute("SELECT id, extra FROM results WHERE workload='resnet50-train'").fetchall():
        store.conn.execute("UPDATE results SET extra=? WHERE id=?", (json.dumps({**json.loads(extra or "{}"),
                                                                                 "nan": True}), rid))
    store.conn.commit()
    row = answer_rows(store)["resnet50-train"]
    assert row[1].startswith("no finite result")
    assert "gpuarena run -w resnet50-train --set loss=cross-entropy" in row[4]
    assert not any("5,926" in cell for cell in row)


def test_the_default_gpu_suite_runs_resnet50_on_a_finite_loss_beside_the_article():
    suite = load_suite(default_suite("cuda:0"))
    losses = [(e.params or {}).get("loss", "sum") for e in suite.entries if e.workload == "resnet50-train"]
    assert "sum" in losses and "cross-entropy" in losses


def test_long_sources_become_numbered_footnotes():
    s = Section("x", "X", ["Price via https://example.com/a and https://example.com/b."],
                [Table("t", [("GPU", "l"), ("source", "l")], [["A", "github NVIDIA/DeepLearningExamples README.md (x)"],
                                                            ["B", "short"]])])
    r = footnote(Report("t", "s", [], [s]))
    assert s.paragraphs[0] == "Price via [1] and [2]."
    assert s.tables[0].rows == [["A", "[3]"], ["B", "short"]]
    assert r.footnotes == ["https://example.com/a", "https://example.com/b",
                           "github NVIDIA/DeepLearningExamples README.md (x)"]


def test_comparison_counts_only_baselines_that_pass_check(report_db):
    store = Store(report_db)
    # article 000's A100 BERT-Large FP32 figure: 4.4x the card's FP32 peak, impossible by check
    assert published_verdict(store, "A100 40GB SXM4", "bert-large-infer", "FP32", {"batch_size": 64, "seq_len": 512},
                             256.8) == "impossible"
    row = ComparisonRow(workload="bert-large-infer", variant="seed", expected_ratio=None,
                        params={"batch_size": 64, "seq_len": 512}, size="full", gpus=1,
                        gpu="NVIDIA H200 SXM 141GB", baseline_gpu="NVIDIA A100 40GB SXM4", unit="sequences/s",
                        baseline_value=256.8, value=137.5, ratio=137.5 / 256.8, ci95_low=None, ci95_high=None,
                        outcome=CompareVerdict.NO_CI_PUBLISHED, baseline_source="published", source="imported",
                        engine="PyTorch eager", origin=None, result_id=1, diverged=False, flags=[])
    assert "impossible" in counted(store, row, lambda x, side: "FP32")
    assert counted(store, row.model_copy(update={"flags": ["NaN"]}), lambda x, side: "FP32") == "diverged (NaN)"
    assert counted(store, row.model_copy(update={"baseline_source": "measured"}), lambda x, side: None) == ""


def test_numbers_by_magnitude_and_sd_in_seconds_per_image():
    assert fmt_num(0.05) == "0.05" and fmt_num(0.000123) == "0.000123"
    assert in_unit("sd15-generate", 0.05) == "20.00"            # 0.05 images/s is 20 s per image
    assert in_unit("resnet50-train", 2919.4) == "2,919"


def test_warnings_grouped_by_what_they_change():
    from tests.report.test_report import typed

    def row(cv=0.01, warnings=(), **extra):
        thr = {"n": 5, "median": 100.0, "mean": 100.0, "stdev": cv * 100, "cv": cv, "ci95_low": 90.0,
               "ci95_high": 110.0, "min": 90.0, "max": 110.0, "unit": "images/s"}
        return {"run_id": "r", "case_key": "k", "workload": "resnet50-train", "variant": "seed", "status": "ok",
                "params": {}, "throughput_median": 100.0, "throughput": thr, "throttled": "throttle_reasons" in extra,
                "extra": extra, "warnings": list(warnings)}

    rows = typed([row(throttle_reasons=["sw_power_cap"], warnings=["GPU throttled during the timed window: "
                                                                   "sw_power_cap"]),
                  row(0.078, nan=True,
                      warnings=["output turned to NaN/inf (the article's loss = output.sum() with lr 0.1 diverges)",
                                "throughput spread is high: CV 7.8% > 5%"]),
                  row(0.051, ["throughput spread is high: CV 5.1% > 5%"])])
    assert caution_counts(rows) == [("diverged run (never shown or used here)", 1), ("noisy (CV > 5%)", 2)]
    kinds = [k for k, _ in grouped(rows)]
    assert kinds[-1] == "at the power cap"                      # listed, but not a caution


def test_method_rows_shared_by_runs_are_one_line():
    rows = [["r1", "a, b", "5", "-", "-", "1", "full", "CUDA events"],
            ["r2", "b, c", "5", "-", "-", "1", "full", "CUDA events"],
            ["r2", "d", "3", "-", "-", "1", "full", "CUDA events"]]
    assert collapse(rows, 2) == [["all 2 runs", "a, b, c", "5", "-", "-", "1", "full", "CUDA events"],
                                 ["r2", "d", "3", "-", "-", "1", "full", "CUDA events"]]


def test_a_power_capped_result_is_not_flagged_but_a_hot_one_is():
    """Cautions come from the typed throttle reasons NVML gave, not from a warning's words."""
    from gpuarena.report.cautions import INFO, shown_flags
    from tests.report.test_report import typed

    def row(reasons, warning="GPU throttled during the timed window"):
        return {"run_id": "r", "case_key": "k", "workload": "resnet50-train", "variant": "seed", "status": "ok",
                "params": {}, "throughput_median": 100.0, "throttled": True,
                "extra": {"throttle_reasons": reasons}, "warnings": [warning]}

    capped, hot, dropped = typed([row(["sw_power_cap"]), row(["sw_power_cap", "hw_thermal"]),
                                  row([], "GPU throttled during the timed window: SM clock dropped > 10%")])
    assert shown_flags(capped, ["throttled", "noisy"]) == ["noisy"]
    assert shown_flags(hot, ["throttled"]) == ["throttled"]
    assert caution_counts([hot]) == [("slowed by heat or power brake", 1)]
    assert caution_counts([capped]) == [] and INFO in grouped([capped])
    assert caution_counts([dropped]) == [("clock dropped (no reason given)", 1)]   # no reason bit: not called heat


def test_the_default_run_shape_gives_resnet50_advice_from_its_finite_recipe(report_db):
    """As after `gpuarena run` on a GPU: the article's recipe diverged at every batch, the finite
    recipe beside it did not; the answer shows the finite figure and advice, never the NaN one."""
    store = Store(report_db)
    for rid, params, extra in store.conn.execute(
            "SELECT id, params, extra FROM results WHERE workload='resnet50-train'").fetchall():
        finite = json.loads(params).get("batch_size") == 128 and rid % 2       # one finite row is enough
        store.conn.execute("UPDATE results SET extra=? WHERE id=?",
                           (json.dumps({**json.loads(extra or "{}"), "nan": not finite}), rid))
    store.conn.commit()
    finite = [r for r in store.results(workload="resnet50-train", status="ok") if not r.extra.nan]
    assert len(finite) >= 1
    row = answer_rows(store)["resnet50-train"]
    best = max(finite, key=lambda r: r.throughput_median)
    assert row[1] == f"{fmt_num(best.throughput_median)} images/s"
    assert row[4].startswith("fastest ")


def test_every_projection_on_the_first_screen_carries_its_band_and_says_when_it_is_an_upper_bound(report_db):
    """Issue 39, symptom 7: the B200 at exactly the BF16 peak ratio for unlike workloads, printed as a figure.
    A projection whose time is all compute term is the reference times the ratio of the peaks, the best case:
    the decision and the chart give its band and say it is an upper bound."""
    store = Store(report_db)
    rows = answer_rows(store)
    sd = rows["sd15-generate"][4]
    assert "(projected, " in sd and "x; at the compute-peak ratio: upper bound)" in sd
    for w in ("resnet50-train", "sd15-generate"):
        assert "(projected)" not in rows[w][4]                  # never a projection without its band
    chart = gather(store).sections[0].charts[0]
    for g in chart.args["groups"]:
        assert len(g.lo) == len(g.hi) == len(g.values) == len(g.upper)
        for v, lo, hi, up in zip(g.values, g.lo, g.hi, g.upper):
            if v is not None:
                assert lo <= v <= hi and (not up or hi == v)     # an upper bound's band ends at it
    assert any(any(g.upper) for g in chart.args["groups"])


def test_advise_marks_a_capped_or_peak_ratio_projection_as_an_upper_bound(report_db):
    from gpuarena.analysis.verbs.advise import advise

    for x in advise(Store(report_db), "sd15-generate").rows:
        if x.basis != "projected":
            assert x.upper_bound is None
        elif x.upper_bound:
            assert x.note.endswith("upper bound") and x.high == x.throughput > x.low
        else:
            assert x.low < x.throughput < x.high
