"""The 175B memory and time model, its claims verdicts and its CLI routes (no torch, no runs)."""

from __future__ import annotations

import pytest

from gpuarena.store.rows import validated
from gpuarena.analysis.physics import llm_advice, llm_claims
from gpuarena.analysis.physics import llm_plan as P
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads.llm.flops import param_counts
from gpuarena.workloads.llm.shapes import SHAPES

GPT3 = SHAPES["gpt3-175b"]


def test_state_is_16_bytes_per_parameter_and_activations_follow_korthikanti():
    lay = P.Layout(n=1, tp=1, pp=1, dp=1, micro_batch=1, global_batch=1, seq_len=2048, checkpointing=False)
    mem = P.memory_per_gpu(GPT3, lay)
    assert mem["params"] + mem["grads"] + mem["optimizer"] == pytest.approx(16 * param_counts(GPT3)[0])
    s, h, a = 2048, GPT3.dim, GPT3.n_heads
    assert (P.activation_bytes_per_layer(GPT3, s, 1, 8, False, flash=False)
            == pytest.approx(s * h * (34 + 5 * a * s / h) / 8))
    assert P.activation_bytes_per_layer(GPT3, s, 1, 8, True) == pytest.approx(2 * s * h / 8)
    # ZeRO-1: the optimizer state shrinks with the data-parallel degree, the bf16 weights do not
    wide = P.memory_per_gpu(GPT3, P.Layout(64, 8, 2, 4, 1, 1536, 2048, False))
    assert wide["optimizer"] == pytest.approx(12 * param_counts(GPT3)[0] / 64)
    assert wide["params"] == pytest.approx(2 * param_counts(GPT3)[0] / 16)


def test_largest_micro_batch_grows_with_memory_and_is_zero_when_nothing_fits():
    lay = P.choose_layout(GPT3, 1024, 40, 2048, P.GPT3_BATCH)
    b40, b80 = P.largest_micro_batch(GPT3, lay, 40), P.largest_micro_batch(GPT3, lay, 80)
    assert 1 <= b40 < b80
    assert P.memory_per_gpu(GPT3, P.Layout(**{**lay.__dict__, "micro_batch": b80}))["total"] <= 80e9 * P.USABLE_MEMORY
    one_more = P.Layout(**{**lay.__dict__, "micro_batch": b80 + 1})
    assert P.memory_per_gpu(GPT3, one_more)["total"] > 80e9 * P.USABLE_MEMORY
    assert P.largest_micro_batch(GPT3, P.Layout(8, 8, 1, 1, 1, 1536, 2048, False), 80) == 0


def test_megatron_estimate_reproduced():
    """Narayanan et al. 2021 (arXiv:2104.04473, section 5.1): 175B, 300B tokens, 1024 A100s at
    140 TFLOP/s each (hardware FLOPs with recomputation, 8 N per token) take about 34 days.
    As model FLOPs (6 N) that is an MFU of 140 x 6/8 / 312."""
    p = P.plan("gpt3-175b", 300e9, "A100 80GB SXM4", 1024, 140 * 6 / 8 / 312)
    assert p.rows[0].compute_only_days == pytest.approx(34, rel=0.05)
    # MFU is end to end: nothing is added on top of it
    assert p.rows[0].fits and p.rows[0].days == pytest.approx(p.rows[0].compute_only_days)
    assert p.assumptions["network_gbs_per_gpu"] == 25.0 and "http" in p.assumptions["network_source"]


def test_plan_refuses_bad_input():
    for kw, msg in (({"mfu": 1.5}, "share of peak"), ({"tokens": -1}, "positive"),
                    ({"gpu_name": "Z9000"}, "not in the catalog")):
        args = {"model": "gpt3-175b", "tokens": 300e9, "gpu_name": "H100 80GB SXM5", "n": 1024, "mfu": 0.4, **kw}
        with pytest.raises(UserError, match=msg):
            P.plan(**args)


def test_claims_verdicts():
    saved, a800, batch = llm_claims.judge()
    assert saved.verdict == "understated" and 0.6 < saved.model < 0.75
    assert a800.verdict == "impossible" and 0 < a800.model < 0.23
    assert batch.verdict == "not supported" and batch.model == 1.0


def test_advise_drops_cards_smaller_than_the_measured_run_and_uses_measured_scaling():
    results = [{"workload": "llm-train", "variant": "bf16", "status": "ok", "gpus": 1, "throughput_median": 100.0,
                "peak_memory_bytes": 60_000_000_000, "device_name": "NVIDIA H200 SXM 141GB",
                "params": {"shape": "llama-1b"},
                "extra": {"shape": "llama-1b"}},
               {"workload": "llm-train", "variant": "bf16", "status": "ok", "gpus": 2, "throughput_median": 190.0,
                "device_name": "NVIDIA H200 SXM 141GB", "params": {}, "extra": {"scaling_efficiency": 0.95}}]
    rows = [{"gpu": g.name, "memory_gb": g.memory_gb, "throughput": 200.0, "scaling": 1.0, "note": ""}
            for g in catalog.load() if g.name in ("NVIDIA A100 40GB SXM4", "NVIDIA H200 SXM 141GB")]
    results = [validated({**r, "id": i, "case_key": f"k{i}"}) for i, r in enumerate(results, 1)]
    kept, excluded = llm_advice.adjust(rows, [], results, gpus=2)
    assert [r["gpu"] for r in kept] == ["NVIDIA H200 SXM 141GB"] and kept[0]["throughput"] == pytest.approx(190.0)
    assert "60.0 GB per GPU" in excluded[0]["reason"]


def test_whatif_and_check_routes(cli, db_path):
    p = cli("whatif", "-w", "llm-train", "--model", "gpt3-175b", "--tokens", "300e9", "--gpu", "H100 80GB SXM5",
            "--n", "1024", "--mfu", "0.4", "--db", db_path)
    assert p.returncode == 0, p.stderr
    assert "8 x 16 x 8 (1)" in p.stdout and "Korthikanti" in p.stdout and "ConnectX-7" in p.stdout
    p = cli("whatif", "-w", "llm-train", "--gpu", "H200", "--n", "2", "--mfu", "measured", "--db", db_path)
    assert p.returncode == 2 and "no llm-train result" in p.stderr
    p = cli("check", "-w", "llm-train", "--format", "md")
    assert p.returncode == 0 and "impossible" in p.stdout and "understated" in p.stdout
