"""Golden-file tests of the compare, cost and check tables over stored results."""

from __future__ import annotations

import pytest

from gpuarena.analysis.rows.verdict import CompareVerdict
from gpuarena.analysis.verbs import check, compare, cost
from gpuarena.errors import UserError
from gpuarena.report.text import check as check_text, compare as compare_text, cost as cost_text
from tests.analysis.conftest import golden


def test_compare_rows_and_golden(store, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # the text table is drawn at the terminal's width
    out = compare.compare(store, "A100 40GB SXM4")
    assert [r.params["batch_size"] for r in out.rows] == [64, 256]  # numeric order
    by_bs = {f"batch_size={r.params['batch_size']}": r for r in out.rows}
    slow = by_bs["batch_size=256"]
    assert slow.gpu == "NVIDIA A800 40GB SXM4"
    assert slow.ratio == pytest.approx(0.10625 / 0.12105, rel=1e-3)
    assert slow.ci95_high < 1 and slow.outcome is CompareVerdict.SLOWER
    assert slow.verdict == f"{slow.ratio:.2f}x (slower)"
    noisy = by_bs["batch_size=64"]
    assert noisy.ci95_low < 1 < noisy.ci95_high
    assert noisy.outcome is CompareVerdict.NO_DIFFERENCE and noisy.verdict == "no significant difference"
    assert "throttled" in noisy.flags and any(f.startswith("CV") for f in noisy.flags)
    assert out.skipped and "version differs (1 vs 2)" in out.skipped[0].reason
    assert out.summary[0].geomean_ratio == pytest.approx((slow.ratio * noisy.ratio) ** 0.5)
    assert (out.summary[0].slower, out.summary[0].no_difference, out.summary[0].faster) == (1, 1, 0)
    dumped = out.model_dump(mode="json")            # the JSON keeps the verdict's text, not the member
    assert dumped["rows"][1]["verdict"] == slow.verdict and "outcome" not in dumped["rows"][1]
    golden("compare.md", compare_text.render(out, "md"))
    golden("compare.txt", compare_text.render(out, "table"))


def test_compare_refuses_unknown_baseline(store):
    with pytest.raises(UserError, match="no ok results for baseline"):
        compare.compare(store, "L4")


def test_cost_golden_and_known_answers(store):
    out = cost.cost_table(store, years=3, gpus=8, kwh_price=0.10, pue=1.5, hosting_per_gpu_year=1000,
                          baseline="A100 40GB SXM4",
                          prices={"NVIDIA A100 40GB SXM4": {"purchase": cost.catalog.Price(15000, "test", "2024")},
                                  "NVIDIA A800 40GB SXM4": {"purchase": cost.catalog.Price(12000, "test", "2024")}},
                          basis="purchase")
    a800 = next(r for r in out.rows if r.gpu == "NVIDIA A800 40GB SXM4" and r.params["batch_size"] == 256)
    assert a800.energy_basis.startswith("measured") and a800.items_per_joule == pytest.approx(1 / 0.1655)
    # TCO: 8 x 12000 + 0.35 kW x 8 x 8766 h x 3 y x 1.5 x $0.10 + 8 x 3 x 1000
    assert a800.tco_total == pytest.approx(96000 + 0.35 * 8 * 8766 * 3 * 1.5 * 0.10 + 24000)
    a100 = next(r for r in out.rows if r.gpu == "NVIDIA A100 40GB SXM4" and r.params["batch_size"] == 256)
    assert a100.energy_basis == "TDP" and a100.items_per_joule == pytest.approx(a100.throughput / 400)
    assert a100.per_1000usd == a100.per_dollar == pytest.approx(a100.throughput / 15)
    assert a100.cloud_usd_per_hr is None                  # one market per table: no cloud figure here
    golden("cost.md", cost_text.render(out, "md"))
    # the cloud basis: AWS's p4d price per GPU-hour, items per dollar, the fleet's rent over the years
    cl = cost.cost_table(store, years=3, gpus=8, baseline="A100 40GB SXM4")
    a100 = next(r for r in cl.rows if r.gpu == "NVIDIA A100 40GB SXM4" and r.params["batch_size"] == 256)
    assert a100.price_usd == 2.7447 and a100.purchase_usd is None and a100.tco_total is None
    assert "tco_total" not in a100.model_dump(mode="json")   # the TCO's keys are a purchase table's only
    assert a100.usd_per_million_items == pytest.approx(2.7447 / (a100.throughput * 3600) * 1e6)
    assert a100.per_dollar == pytest.approx(a100.throughput * 3600 / 2.7447)
    assert a100.fleet_usd == pytest.approx(2.7447 * 8 * 8766 * 3)
    assert {u.gpu for u in cl.unpriced} == {"NVIDIA A800 40GB SXM4"}     # no cloud sells it: said, kept
    assert "| NVIDIA A800 40GB SXM4 |" in cost_text.render(cl, "md") and "unpriced" in cost_text.render(cl, "md")


def test_cost_tco_arithmetic():
    t = cost.tco(10000, 400, n_gpus=4, years=2, kwh_price=0.2, pue=1.25, hosting_per_gpu_year=500)
    assert t == {"purchase": 40000, "energy": pytest.approx(0.4 * 4 * 8766 * 2 * 1.25 * 0.2),
                 "hosting": 4000, "total": pytest.approx(44000 + 0.4 * 4 * 8766 * 2 * 1.25 * 0.2)}


def test_check_golden(store):
    claims = check.read_claims(str(check.ARTICLE_CLAIMS))
    rn = [c for c in claims if c["workload"] == "resnet50-train"]
    rows = check.check_claims(rn, store)
    top = next(r for r in rows if r.throughput == 2876)
    assert top.implied_tflops == pytest.approx(2876 * 6 * 4.089e9 / 1e12)
    # the article's code runs cuDNN convolutions in TF32: judged against the TF32 peak
    assert top.share_of_peak == pytest.approx(top.implied_tflops / 156)
    # the ceiling is the best finite measurement here: the stored A100 at 2,410 images/s (38% of TF32 peak)
    assert top.verdict == "implausible" and "gpuarena measurement" in top.ceiling["source"]
    assert top.ceiling["share"] == pytest.approx(256 / 0.1062 * 6 * 4.089e9 / 1e12 / 156, rel=0.01)
    golden("check.md", check_text.render(rows, "md"))


def test_check_verdicts():
    ok = check.check_claim({"gpu": "H100 SXM5", "workload": "resnet50-train", "precision": "tf32",
                            "batch_size": 256, "throughput": 1894})
    assert ok.verdict == "plausible"
    imp = check.check_claim({"gpu": "L4", "workload": "resnet50-train", "precision": "fp16",
                             "batch_size": 256, "throughput": 100000})
    assert imp.verdict == "impossible"
    with pytest.raises(UserError, match="unknown workload"):
        check.check_claim({"gpu": "L4", "workload": "nope-infer", "precision": "fp16",
                           "batch_size": 1, "throughput": 1})


def test_a_non_finite_result_has_no_cost_and_is_no_record(tmp_path):
    """Session 8's H200 bundle holds a ResNet-50 CUDA-graph rung at 28,634 images/s whose output was
    not finite: the cost table leaves it out and says so, and the report's fastest recipe beside
    MLPerf's figure is the finite rung, not it."""
    from gpuarena.analysis.rows.published import load_into
    from gpuarena.report.ladder import against_reference
    from gpuarena.store.bundle import import_bundle
    from gpuarena.store.db import Store

    store = Store(str(tmp_path / "s8.db"))
    import_bundle(store, "docs/data/h200-s8-int8-2026-12-01.json")
    load_into(store)
    rows = store.results(workload="resnet50-infer")
    nan = [r for r in rows if r.extra.nan]
    assert len(nan) == 1 and nan[0].throughput_median > max(r.throughput_median for r in rows
                                                             if not r.extra.nan and r.source != "published")
    out = cost.cost_table(store, workload="resnet50-infer")
    assert nan[0].variant not in {r.variant for r in out.rows if r.params.get("batch_size") == 256}
    assert any("not finite" in f for f in out.flags)
    ref = against_reference("resnet50-infer", rows, ["batch_size"])
    assert ref is not None and all(row[1] != nan[0].variant or "256" not in row[2] for row in ref.rows)


def test_a_finite_but_wrong_output_read_back_is_no_record(tmp_path):
    """Session 10's bundle holds a batch-1 CUDA-graph ResNet-50 result stored before check() compared
    outputs with the FP32 reference: finite logits, worst-row cosine 0.00.  Read back, it carries a
    flag of kind nan and no decision stands on it."""
    from gpuarena.analysis.rows import common as R
    from gpuarena.store.bundle import import_bundle
    from gpuarena.store.db import Store
    from gpuarena.store.flags import FlagKind, diverged, flags_of

    store = Store(str(tmp_path / "s10.db"))
    import_bundle(store, "docs/data/h200-s10-2026-12-02.json")
    graph_b1 = [r for r in store.results(workload="resnet50-infer")
                if "cuda-graph" in r.variant and r.params.get("batch_size") == 1]
    assert len(graph_b1) == 1 and not graph_b1[0].extra.nan and diverged(graph_b1[0])
    assert any(f.kind is FlagKind.nan and "cosine" in f.message for f in flags_of(graph_b1[0]))
    assert graph_b1[0] not in R.finite(store.results(workload="resnet50-infer"))
    fine = [r for r in store.results(workload="resnet50-infer") if r.extra.accuracy and not r.extra.nan]
    assert fine and not any(diverged(r) for r in fine if "cuda-graph" not in r.variant)
