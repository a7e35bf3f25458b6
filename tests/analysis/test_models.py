"""Known answers: catalog matching, prices, the interconnect model, published rows, advice."""

from __future__ import annotations

from gpuarena.analysis.rows import fmt_params

import pytest

from gpuarena.analysis import advise, cost, interconnect, whatif
from gpuarena.data import catalog, published
from gpuarena.errors import UserError


@pytest.mark.parametrize("text,name", [
    ("A100 40GB SXM4", "NVIDIA A100 40GB SXM4"), ("a100-sxm4-40gb", "NVIDIA A100 40GB SXM4"),
    ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 40GB SXM4"), ("NVIDIA H200", "NVIDIA H200 SXM 141GB"),
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB SXM5"), ("A100-PCIE-40GB", "NVIDIA A100 40GB PCIe"),
    ("NVIDIA L4", "NVIDIA L4"), ("Tesla V100-SXM2-32GB", "NVIDIA Tesla V100 32GB SXM2"),
    ("A100 80GB SXM4 (DGX A100)", "NVIDIA A100 80GB SXM4"),
])
def test_loose_matching(text, name):
    assert catalog.match(text).name == name


def test_ambiguous_and_unknown():
    with pytest.raises(UserError, match="ambiguous: .*A100 40GB SXM4.*A100 80GB SXM4"):
        catalog.match("A100")
    with pytest.raises(UserError, match="not in the catalog"):
        catalog.match("Radeon 7900")


def test_price_file(tmp_path):
    over = catalog.load_prices(str(catalog.DATA / "article_prices.yaml"))
    assert over["NVIDIA A800 40GB SXM4"]["purchase"].usd == 10500
    bad = tmp_path / "p.yaml"
    bad.write_text("prices:\n  - gpu: L4\n    purchase_usd: -3\n    source: x\n    date: '2024'\n")
    with pytest.raises(UserError, match="purchase_usd"):
        catalog.load_prices(str(bad))
    bad.write_text("prices:\n  - gpu: L4\n    purchase_usd: 3000\n    date: '2024'\n")
    with pytest.raises(UserError, match="source"):
        catalog.load_prices(str(bad))


def test_ring_allreduce_and_busbw():
    # 100 MB over 4 GPUs at 100 GB/s: 2 * 3/4 * 1e8 / 1e11 = 1.5 ms
    assert interconnect.ring_allreduce_s(1e8, 4, 100) == pytest.approx(1.5e-3)
    assert interconnect.ring_allreduce_s(1e8, 1, 100) == 0
    assert interconnect.catalog_busbw(catalog.match("A100 40GB SXM4"))[0] == pytest.approx(240)
    assert interconnect.catalog_busbw(catalog.match("A800 40GB SXM4"))[0] == pytest.approx(160)
    assert interconnect.catalog_busbw(catalog.match("L40S"))[0] == pytest.approx(0.8 * 32)


def test_whatif_efficiency():
    p = whatif.predict("resnet50-train", "A100 40GB SXM4", [4, 8], throughput=2410, batch_size=256)
    compute = 256 / 2410
    comm4 = 2 * 3 / 4 * 25_557_032 * 4 / 240e9
    assert p["rows"][0]["efficiency"] == pytest.approx(compute / (compute + comm4))
    half = whatif.predict("resnet50-train", "A800 40GB SXM4", [4], throughput=2115, batch_size=256, overlap=0.5)
    assert half["rows"][0]["exposed_s"] == pytest.approx(0.5 * 2 * 3 / 4 * 25_557_032 * 4 / 160e9)


def test_resnet50_parameter_count():
    import torch
    import torchvision

    with torch.device("meta"):   # shapes only: the count needs no weights
        model = torchvision.models.resnet50()
    assert sum(p.numel() for p in model.parameters()) == whatif.gradient_sizes()["resnet50-train"]


def test_bert_large_parameter_count():
    """The gradients DDP all-reduces: BertForPreTraining as bert-large-train builds it (tied weights once)."""
    from transformers import BertForPreTraining

    from gpuarena.workloads.bert import BertLargeTrain, build_config

    import torch

    with torch.device("meta"):   # shapes only: the count needs no weights (ties are made on meta alike)
        model = BertForPreTraining(build_config(BertLargeTrain.resolve_params({})))
    assert sum(p.numel() for p in model.parameters()) == whatif.gradient_sizes()["bert-large-train"] == 336_226_108


def test_bert_parameter_count_formula_matches_the_models_at_other_sizes():
    """param_count is a formula of the config: pinned against both built models at a small size."""
    from transformers import BertForPreTraining, BertModel

    from gpuarena.workloads.bert import BertLargeInfer, BertLargeTrain, build_config

    p = BertLargeTrain.resolve_params({}, size="tiny")
    assert sum(x.numel() for x in BertForPreTraining(build_config(p)).parameters()) == BertLargeTrain.param_count(p)
    assert sum(x.numel() for x in BertModel(build_config(p)).parameters()) == BertLargeInfer.param_count(p)


def test_article_perf_per_price_table(tmp_path):
    """Article 000 section 5: perf/price A100 1.0x vs A800 '1.18x', from its own tables and prices."""
    from gpuarena.store.db import Store

    s = Store(str(tmp_path / "p.db"))
    assert published.load_into(s) > 40
    assert published.load_into(s) == len(s.results(source="published"))     # replaced, not doubled
    out = cost.cost_table(s, workload="resnet50-train", baseline="A100 40GB SXM4", basis="purchase",
                          prices=catalog.load_prices(str(catalog.DATA / "article_prices.yaml")))
    # the file's street prices make the table's one market: the catalog's list prices are not mixed in
    assert out["assumptions"]["market"] == "street"
    assert {r["gpu"] for r in out["rows"] if r["price_usd"]} == {"NVIDIA A100 40GB SXM4", "NVIDIA A800 40GB SXM4"}
    rel = {fmt_params(r["params"]): r["rel_perf_per_price"] for r in out["rows"]
           if r["gpu"] == "NVIDIA A800 40GB SXM4" and r["variant"] == "seed"}
    # 2489/10500 / (2876/15000) at batch 512: 1.24x -- the article's 1.18x does not follow from its own tables
    assert rel["batch_size=512 image_size=224"] == pytest.approx((2489 / 10500) / (2876 / 15000))
    assert round(rel["batch_size=512 image_size=224"], 2) == 1.24
    assert all(1.2 < v < 1.35 for v in rel.values())
    base = [r for r in out["rows"] if r["gpu"] == "NVIDIA A100 40GB SXM4" and r["variant"] == "seed"]
    assert all(r["rel_perf_per_price"] == 1.0 for r in base)


def test_advise_measured_and_projected(store):
    out = advise.advise(store, "resnet50-train", min_memory=40)
    by = {r["gpu"]: r for r in out["rows"]}
    assert by["NVIDIA A100 40GB SXM4"]["basis"] == "measured"
    proj = by["NVIDIA H200 SXM 141GB"]
    assert proj["basis"] == "projected"
    assert any(e["gpu"] == "NVIDIA L4" for e in out["excluded"])
    assert out["rows"][0]["rank"] == 1 and out["explanation"].startswith("For resnet50-train on 1 GPU(s)")


def test_advise_ranks_the_class_of_the_fastest_finite_measurement(tmp_path):
    """An FP32 result and a bf16 result are not set side by side: the bf16 class is ranked, the FP32 one is
    listed as another class, and other GPUs are projected in bf16 from the H200's measurement."""
    from gpuarena.store.db import Store
    from tests.analysis.conftest import result

    s = Store(str(tmp_path / "p.db"))
    h200 = "NVIDIA H200"
    s.add_result(result(h200, 256, [0.25, 0.25, 0.25], precision="default"))
    s.add_result(result(h200, 256, [0.05, 0.05, 0.05], precision="bf16", variant="amp-bf16"))
    out = advise.advise(s, "resnet50-train")
    assert out["class"].startswith("BF16") and any(c.startswith("TF32") for c in out["other_classes"])
    a100 = next(r for r in out["rows"] if r["gpu"] == "NVIDIA A100 80GB SXM4")
    assert a100["basis"] == "projected" and a100["low"] < a100["throughput"] < a100["high"]
    assert a100["throughput"] < 256 / 0.05
    s.close()


def test_advise_ranks_measured_above_a_slower_cards_projection(tmp_path):
    """H800 has the H200's peaks but less bandwidth: its projection stays below the measured H200."""
    from gpuarena.store.db import Store
    from tests.analysis.conftest import result

    s = Store(str(tmp_path / "t.db"))
    s.add_result(result("NVIDIA H200", 256, [0.05, 0.05, 0.05], precision="bf16", variant="amp-bf16"))
    rows = advise.advise(s, "resnet50-train")["rows"]
    by = {r["gpu"]: r for r in rows}
    h800 = next(g for g in by if "H800" in g)
    assert by[h800]["throughput"] < by["NVIDIA H200 SXM 141GB"]["throughput"]
    assert rows.index(by["NVIDIA H200 SXM 141GB"]) < rows.index(by[h800])
    assert by["NVIDIA H200 SXM 141GB"]["basis"] == "measured"
    s.close()


def test_whatif_uses_the_bucket_busbw_and_the_measured_overlap(tmp_path):
    """Known answers for the corrected model: busbw at DDP's 25 MiB message from the measured curve,
    overlap from step(N) - step(1) of the same run against the modelled all-reduce."""
    import math

    from gpuarena.store.db import Store
    from tests.report.conftest import FINGERPRINT, RUN_ID, result

    store = Store(str(tmp_path / "w.db"))
    env = store.env_id(FINGERPRINT)
    store.create_run("multi-gpu", "cuda", [], env, argv=["run"], run_id=RUN_ID)
    for mb, bw in ((4, 104.0), (32, 240.0), (4096, 345.0)):
        store.add_result(result("allreduce", "seed", {"size_mb": mb, "dtype": "float32"}, [0.001] * 3, 1,
                                "GB/s", gpus=2, env_id=env, extra={"busbw_gbs": bw, "size_bytes": mb * 2**20}))
    expected_bw = 104 + 136 * math.log(25 / 4) / math.log(8)
    assert interconnect.interpolate([(4.0, 104.0), (32.0, 240.0)], 25.0) == pytest.approx(expected_bw)
    assert interconnect.interpolate([(4.0, 104.0), (32.0, 240.0)], 1.0) == 104.0      # ends are held
    assert interconnect.interpolate([(4.0, 104.0), (32.0, 240.0)], 1e6) == 240.0
    step = 256 / 4600
    comm = whatif.gradient_sizes()["resnet50-train"] * 4 / (expected_bw * 1e9)   # ring at N=2: 2 x 1/2 x bytes
    # 2 GPUs: each step a quarter of the all-reduce longer (the rest hidden); the no_sync() figures
    # (comm_exposed_s) and the NCCL kernel time (comm_total_s) do not enter the model
    for n, step_n in ((1, step), (2, step + 0.25 * comm)):
        store.add_result(result("ddp-train", "seed", {"batch_size": 256, "model": "resnet50"},
                                [step_n] * 3, 256 * n, "images/s", gpus=n, env_id=env,
                                extra={"comm_exposed_s": 0.0, "comm_total_s": 1.0, "accum_steps": 1}))
    p = whatif.predict("ddp-train", "H200", [2, 8], store, model="resnet50")
    assert p["message_bytes"] == 25 * 2**20
    assert p["rows"][0]["busbw_gbs"] == pytest.approx(expected_bw)           # nearest count: 2 GPUs
    assert "at 25 MiB" in p["busbw_from"]
    assert p["overlap"] == pytest.approx(0.75)                                # not 1 - 0/1.0
    assert p["rows"][0]["exposed_s"] == pytest.approx(0.25 * comm)
    # a 2-byte compression hook halves the gradients and the message (12.5 MiB)
    store.add_result(result("ddp-train", "fp16-compress", {"batch_size": 256, "model": "resnet50"}, [step] * 3,
                            256, "images/s", gpus=1, env_id=env, extra={"comm_exposed_s": 0.0, "accum_steps": 1}))
    half = whatif.predict("ddp-train", "H200", [2], store, model="resnet50", variant="fp16-compress")
    assert half["grad_bytes"] == p["grad_bytes"] / 2 and half["message_bytes"] == 12.5 * 2**20
    assert half["overlap"] == 0.0 and "default" in half["overlap_from"]      # no 2-GPU fp16-compress result
    with pytest.raises(UserError, match="--model 'gpt2'"):
        whatif.predict("ddp-train", "H200", [2], store, model="gpt2")


def test_a_published_figure_meets_only_the_default_setting():
    """A published row states few params; the measured row's others must be the workload's defaults."""
    from gpuarena.analysis.compare import _params_match

    pub = {"batch_size": 1}
    default = {"batch_size": 1, "inference_steps": 50, "search": "none", "image_size": 512}
    search = {**default, "inference_steps": 10, "search": "max-batch"}
    assert _params_match(pub, default, True, False, "sd15-generate")
    assert not _params_match(pub, search, True, False, "sd15-generate")       # 10 steps, batch search
    assert not _params_match(search, pub, False, True, "sd15-generate")       # either side may be published
    assert not _params_match(pub, {**default, "batch_size": 2}, True, False, "sd15-generate")
    # a workload gpuarena does not run holds nothing but the stated params
    assert _params_match(pub, {"batch_size": 1, "x": 3}, True, False, "someone-elses-workload")


def test_best_is_taken_among_finite_results(tmp_path):
    """A diverged run (NaN flagged) is not a speed record while a finite result exists."""
    from gpuarena.report.first_screen import best_finite, figure
    from gpuarena.store.db import Store
    from tests.analysis.conftest import result

    s = Store(str(tmp_path / "n.db"))
    h200 = "NVIDIA H200"
    s.add_result(result(h200, 768, [0.098, 0.098, 0.098], precision="bf16", variant="amp-bf16",
                        extra={"nan": True}, warnings=["output turned to NaN/inf"]))
    s.add_result(result(h200, 768, [0.103, 0.103, 0.103], precision="bf16", variant="amp-bf16+cudnn-benchmark"))
    out = advise.advise(s, "resnet50-train")
    mine = next(r for r in out["rows"] if r["gpu"] == "NVIDIA H200 SXM 141GB")
    assert mine["throughput"] == pytest.approx(768 / 0.103)
    best = best_finite(s.results())
    assert figure(best)[1] == "7,456 images/s" and "cudnn-benchmark" in best.variant
    # with nothing finite, the report's first screen shows no figure at all (it says what to run)
    only_nan = [r for r in s.results() if r.extra.nan]
    assert best_finite(only_nan) is None
    s.close()


def test_cost_uses_no_energy_figure_that_implies_an_unphysical_power(tmp_path):
    """A bundle's 0.0001 J per image at ~2,400 images/s is 0.24 W on a 400 W A100: cost printed
    items/J 10,000 from it; an energy figure implying 4 kW is as wrong. Both fall back, and say so."""
    from gpuarena.store.db import Store
    from tests.analysis.conftest import result

    s = Store(str(tmp_path / "e.db"))
    steps = [0.1062, 0.1060, 0.1065]
    s.add_result(result("NVIDIA A100-SXM4-40GB", 256, steps, power_w_mean=380.0, energy_j_per_item=0.0001,
                        energy_source="nvml_energy_counter"))
    s.add_result(result("NVIDIA A800-SXM4-40GB", 256, steps, power_w_mean=9000.0, energy_j_per_item=1.7,
                        energy_source="nvml_energy_counter"))
    s.add_result(result("NVIDIA H100 80GB HBM3", 256, steps, power_w_mean=600.0, energy_j_per_item=0.25,
                        energy_source="nvml_energy_counter"))
    rows = {r["gpu"]: r for r in cost.cost_table(s, workload="resnet50-train")["rows"]}
    thr = 256 / 0.1062
    a100, a800, h100 = (rows[f"NVIDIA {n}"] for n in ("A100 40GB SXM4", "A800 40GB SXM4", "H100 80GB SXM5"))
    assert a100["items_per_joule"] == pytest.approx(thr / 400.0)
    assert a100["energy_basis"].startswith("TDP; the measured 0.0001 J per item")
    assert a800["items_per_joule"] == pytest.approx(thr / 400.0)      # 9 kW mean power is not physical either
    assert a800["energy_basis"].startswith("TDP; the measured 1.7 J") and a800["power_basis"] == "TDP"
    assert h100["items_per_joule"] == pytest.approx(4.0) and h100["energy_basis"].startswith("measured (nvml")
    s.close()


def test_cost_uses_no_stored_energy_above_the_power_its_own_samples_read(tmp_path):
    """docs/data/h200-s11 result 1 (stored before measure/energy.py): 0.0197 J per image at 41,479
    images/s is 818 W, within 125% of the H200's 700 W TDP but 45% above the 566 W its own power
    samples reached over a 0.62 s window (six steps of NVML's counter). It falls back to the TDP;
    one within the samples' reach (1.93 s at 684 W max, 706 W implied) stays measured."""
    from gpuarena.store.db import Store
    from tests.analysis.conftest import result

    s = Store(str(tmp_path / "e.db"))
    s.add_result(result("NVIDIA H200", 256, [0.006172], power_w_mean=421.9, power_w_max=565.7,
                        energy_j_per_item=0.0197314, energy_source="nvml_energy_counter"))
    s.add_result(result("NVIDIA H200", 64, [0.0899], power_w_mean=679.9, power_w_max=684.0,
                        energy_j_per_item=706.3 * 0.0899 / 64, energy_source="nvml_energy_counter"))
    # measured since the check (extra.energy): the window's wall time, not the timed steps', divides its joules
    s.add_result(result("NVIDIA H200", 32, [0.05], power_w_mean=400.0, power_w_max=400.0,
                        energy_j_per_item=460.0 * 0.05 / 32, energy_source="mean_power_x_time",
                        extra={"energy": {"window_s": 1.15, "counter_j": 0.0, "sampled_j": 460.0,
                                          "source": "mean_power_x_time"}}))
    rows = {r["params"]["batch_size"]: r for r in cost.cost_table(s, workload="resnet50-train")["rows"]}
    short, long = rows[256], rows[64]
    assert rows[32]["energy_basis"] == "measured (mean_power_x_time)"
    assert short["items_per_joule"] == pytest.approx(256 / 0.006172 / 700.0)
    assert short["energy_basis"].startswith("TDP; the measured 0.0197 J per item")
    assert "above the 565.7 W its power samples reached" in short["energy_basis"]
    assert long["items_per_joule"] == pytest.approx(64 / (706.3 * 0.0899))
    assert long["energy_basis"] == "measured (nvml_energy_counter)"
    s.close()


def test_cost_uses_no_stored_energy_of_a_window_under_a_second(tmp_path):
    """NVML's energy counter steps every 100 ms and its reported power is a 1 s average (Ampere except
    GA100, and newer): a window under 1 s has no energy since session 13 (measure/energy.py), and one
    stored before, with its window read from its record or from its last power sample, is not used."""
    from gpuarena.store.db import Store
    from tests.analysis.conftest import result

    s = Store(str(tmp_path / "w.db"))
    samples = [{"t": 0.1 * i, "power_w": 300.0} for i in range(5)]          # closed at 0.4 s
    s.add_result(result("NVIDIA H200", 64, [0.1], power_w_mean=300.0, power_w_max=300.0,
                        energy_j_per_item=300.0 * 0.1 / 64, energy_source="mean_power_x_time", telemetry=samples))
    s.add_result(result("NVIDIA H200", 32, [0.05], power_w_mean=400.0, power_w_max=400.0,
                        energy_j_per_item=400.0 * 0.05 / 32, energy_source="mean_power_x_time",
                        extra={"energy": {"window_s": 0.575, "sampled_j": 230.0, "source": "mean_power_x_time"}}))
    s.add_result(result("NVIDIA H200", 16, [0.05], power_w_mean=400.0, power_w_max=400.0,
                        energy_j_per_item=400.0 * 0.05 / 16, energy_source="nvml_energy_counter",
                        telemetry=[{"t": 0.1 * i, "power_w": 400.0} for i in range(15)]))     # 1.4 s
    rows = {r["params"]["batch_size"]: r for r in cost.cost_table(s, workload="resnet50-train")["rows"]}
    for b, window in ((64, "0.4 s"), (32, "0.57 s")):
        assert rows[b]["energy_basis"].startswith(f"TDP; the measured energy covers a {window} window"), b
        assert rows[b]["items_per_joule"] == pytest.approx(rows[b]["throughput"] / 700.0)
    assert rows[16]["energy_basis"] == "measured (nvml_energy_counter)"
    s.close()
