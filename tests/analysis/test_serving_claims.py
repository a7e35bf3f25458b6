"""Serving claims as people state them (issue 39, symptom 3): per node with --replicas or tensor
parallel, capacity ratios at max throughput, TTFT, and published engines as evidence.

Figures, each read at its source:
- MLPerf Inference v4.0, NVIDIA, 8x H200, Llama 2 70B (99.9%) Offline: 27,738.3 tokens/s, 94.6223
  samples/s (github mlcommons/inference_results_v4.0 @3c4a1cf1 closed/NVIDIA/results/
  H200-SXM-141GBx8_TRT/llama2-70b-99.9/Offline/performance/run_1/mlperf_log_summary.txt); TP1 x 8
  (closed/NVIDIA/configs/llama2-70b/Offline/__init__.py).
- TensorRT-LLM's H200 launch blog (docs/source/blogs/H200launch.md @1555478c): Llama-70B FP8, ISL/OSL
  2048/128, max throughput TP1: H200 1.9x the H100 (H100 batch 8, H200 batch 32).
- TensorRT-LLM docs/source/performance.md @138f96d4: L40S FP8 LLaMA 7B batch 32 2048/128 581 tokens/s;
  A100 FP16 LLaMA 7B batch 52 2048/128 591; A100 FP16 LLaMA 7B first token of 2,048 in 133 ms.
"""

from __future__ import annotations

import json

import pytest

from gpuarena.analysis.physics import serving_evidence as E
from gpuarena.analysis.physics import serving_model as M
from gpuarena.analysis.physics.serving_claims import check_serving, check_serving_ratio
from gpuarena.data import catalog
from gpuarena.data import serving_figures as evidence
from gpuarena.errors import UserError
from gpuarena.workloads.llm.shapes import SHAPES

H200 = catalog.match("H200")
MLPERF = ("--gpu", "H200", "--precision", "fp8", "--set", "shape=llama2-70b", "--set", "prompt_len=293",
          "--set", "new_tokens=293", "--format", "json")


@pytest.fixture(autouse=True)
def _no_measurements(tmp_path, monkeypatch):
    """Published evidence only: no database, so no measurement moves a ceiling."""
    monkeypatch.setenv("GPUARENA_DB", str(tmp_path / "absent.db"))


def _check(cli, *args) -> dict:
    p = cli("check", "-w", "llm-serve", *args)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)[0]


def test_the_physical_bound_has_no_communication_in_it():
    """The docs say the bound is communication free: the ring all-reduce volume is left out too."""
    cfg = SHAPES["llama2-70b"]
    bound = M.upper_bound(cfg, H200, "fp8", 8, 512, 293, 293, 1)
    assert bound["comm_ms"] == 0
    with_ring = M.request(cfg, H200, "fp8", 8, 512, 293, 293, 1.0, 1.0, latency=0.0, kv_bytes=1)
    assert with_ring["comm_ms"] > 0 and bound["tokens_per_s"] > with_ring["tokens_per_s"]


def test_mlperf_h200_node_gets_the_verdict_of_its_gpus(cli):
    """27,738 tokens/s on 8 H200s was 'impossible' stated per node (the bound counted the ring volume of
    TP=8) while 3,467 per GPU was plausible.  Per node, as 8 copies or as one TP=8 copy, it is plausible,
    and the output says which layout it judged."""
    node = _check(cli, *MLPERF, "--gpus", "8", "--replicas", "8", "--throughput", "27738.3")
    gpu = _check(cli, *MLPERF, "--throughput", "3467.3")
    tp8 = _check(cli, *MLPERF, "--gpus", "8", "--throughput", "27738.3")
    assert node["verdict"] == gpu["verdict"] == tp8["verdict"] == "plausible"
    assert "8 independent copies (data parallel, one GPU each)" in node["reason"] and node["replicas"] == 8
    assert "one copy in tensor parallel (TP=8)" in tp8["reason"] and tp8["tensor_parallel"] == 8
    assert node["bound_tokens_per_s"] == pytest.approx(8 * gpu["bound_tokens_per_s"])
    assert node["share_of_peak"] == pytest.approx(gpu["share_of_peak"], rel=1e-5)       # per GPU alike


def test_a_node_figure_above_what_engines_reach_is_implausible(cli):
    row = _check(cli, *MLPERF, "--gpus", "8", "--replicas", "8", "--throughput", "50000")
    assert row["verdict"] == "implausible" and row["credible_tokens_per_s"] < 50000 < row["bound_tokens_per_s"]


@pytest.mark.parametrize("extra, msg", [
    (("--gpus", "8", "--replicas", "0"), "replicas"),
    (("--gpus", "8", "--replicas", "3"), "--replicas 3 does not divide --gpus 8"),
    (("--replicas", "2"), "--replicas 2 does not divide --gpus 1"),
])
def test_bad_replicas_refused_in_one_line(cli, extra, msg):
    p = cli("check", "-w", "llm-serve", *MLPERF, "--throughput", "1000", *extra)
    assert p.returncode == 2 and msg in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_serving_options_refused_for_other_workloads(cli):
    p = cli("check", "-w", "resnet50-train", "--gpu", "H200", "--precision", "bf16", "--batch-size", "256",
            "--throughput", "3000", "--replicas", "2")
    assert p.returncode == 2 and "--replicas and --ttft are for llm-serve" in p.stderr


def test_replicas_from_a_csv_are_checked_too(tmp_path, cli):
    path = tmp_path / "c.csv"
    path.write_text("gpu,workload,precision,batch_size,throughput,gpus,replicas,model,prompt_len,new_tokens\n"
                    "H200,llm-serve,fp8,,27738.3,8,8,llama2-70b,293,293\n"
                    "H200,llm-serve,fp8,,27738.3,8,3,llama2-70b,293,293\n")
    p = cli("check", "--csv", str(path))
    assert p.returncode == 2 and "--replicas 3 does not divide --gpus 8" in p.stderr


def test_h200_19x_h100_at_max_throughput_is_plausible():
    """NVIDIA's 1.9x (Llama 2 70B FP8, 2048 in / 128 out, max throughput, one GPU each) was
    'implausible': both cards ran at batch 1.  At max throughput each runs the largest batch its memory
    holds: the H100 only a handful of sequences beside 69 GB of weights, the H200 some 160-200."""
    claim = {"precision": "fp8", "shape": "llama2-70b", "prompt_len": 2048, "new_tokens": 128}
    row = check_serving_ratio("H200", "H100 80GB SXM5", 1.9, 1.9, claim)
    assert row["verdict"] == "plausible" and row["expected_low"] < 1.9 < row["expected_high"]
    assert "largest batch its memory holds" in row["reason"] and "batch 161 vs 7" in row["reason"]
    same = check_serving_ratio("H200", "H100 80GB SXM5", 1.9, 1.9, {**claim, "shape": "llama3-8b", "prompt_len": 128})
    assert same["verdict"] == "implausible" and same["expected_high"] < 1.1     # both at the same FP8 peak


def test_a_ratio_at_a_batch_one_card_cannot_hold_is_impossible():
    claim = {"precision": "bf16", "shape": "llama2-70b", "prompt_len": 2048, "new_tokens": 128, "batch_size": 32}
    row = check_serving_ratio("H200", "H100 80GB SXM5", 1.9, 1.9, claim)
    assert row["verdict"] == "impossible" and "161 GB per GPU" in row["reason"]


def test_ratio_claims_from_the_cli_and_a_csv(tmp_path, cli):
    p = cli("check", "-w", "llm-serve", "--gpu", "H200", "--vs", "H100 80GB SXM5", "--ratio", "1.9", "--precision",
            "fp8", "--set", "shape=llama2-70b", "--set", "prompt_len=2048", "--set", "new_tokens=128", "--format",
            "json")
    assert p.returncode == 0 and json.loads(p.stdout)[0]["verdict"] == "plausible"
    path = tmp_path / "r.csv"
    path.write_text("gpu,workload,precision,batch_size,model,prompt_len,new_tokens,vs,ratio\n"
                    "H200,llm-serve,fp8,,llama3-8b,128,128,H100 80GB SXM5,1.9\n")
    p = cli("check", "--csv", str(path), "--format", "json")
    assert p.returncode == 0 and json.loads(p.stdout)[0]["verdict"] == "implausible"
    path.write_text("gpu,workload,precision,batch_size,throughput,model,vs,ratio\n"
                    "H200,llm-serve,fp8,,1000,llama3-8b,H100 80GB SXM5,1.9\n")
    p = cli("check", "--csv", str(path))
    assert p.returncode == 2 and "states a ratio, not a throughput" in p.stderr


@pytest.mark.parametrize("gpu, prec, shape, gpus, ttft, verdict", [
    ("A100 80GB SXM4", "fp16", "llama2-7b", "1", "0.133", "plausible"),     # TensorRT-LLM's table: 69% of peak
    ("A100 80GB SXM4", "fp16", "llama2-7b", "1", "0.100", "implausible"),   # 92% of the FP16 peak
    ("H100 80GB SXM5", "fp8", "llama2-70b", "4", "0.109", "plausible"),     # TensorRT-LLM's table, TP4
    ("H100 80GB SXM5", "fp8", "llama2-70b", "1", "0.020", "impossible"),    # 291 TFLOP in 20 ms on one card
])
def test_ttft_claims_judged_by_the_prefill_bound(cli, gpu, prec, shape, gpus, ttft, verdict):
    row = _check(cli, "--gpu", gpu, "--precision", prec, "--gpus", gpus, "--ttft", ttft, "--set", f"shape={shape}",
                 "--set", "prompt_len=2048", "--format", "json")
    assert row["verdict"] == verdict and row["reason"].startswith("the prefill of 1 x 2048 tokens")


def test_ttft_with_a_throughput_is_two_claims():
    with pytest.raises(UserError, match="judged alone"):
        check_serving({"gpu": "H200", "workload": "llm-serve", "precision": "fp8", "ttft": 0.1, "throughput": 10,
                       "model": "llama2-7b", "prompt_len": 2048})


def test_every_published_serving_figure_lies_within_its_physical_bound():
    """A published figure above the serving model's bound at its own conditions would mean the model
    (or the row) is wrong; each is also evidence of the shares engines reach."""
    got = E.all_reached()
    assert len(got) >= 30
    over = [f.text() for f in got if not 0 < f.efficiency <= 1]
    assert not over, over


def test_published_engines_set_the_serving_ceiling():
    """The L40S FP8 and A100 FP16 TensorRT-LLM figures for 2,048-token prompts were 'implausible': the
    ceiling was gpuarena's eager prefill MFU (50%) and gpt-fast's batch-1 bandwidth share.  Published
    engines are evidence: the ceiling names one, and both figures are plausible."""
    for prec in ("fp8", "fp16"):
        ceil = E.ceiling([], prec)
        assert ceil.prefill > M.DEFAULT_PREFILL_MFU[0] and ceil.prefill_from.startswith("published: TensorRT-LLM")
    for gpu, prec, batch, thr in (("L40S", "fp8", 32, 581), ("A100 80GB SXM4", "fp16", 52, 591)):
        row = check_serving({"gpu": gpu, "workload": "llm-serve", "precision": prec, "batch_size": batch,
                             "throughput": thr, "model": "llama2-7b", "prompt_len": 2048, "new_tokens": 128})
        assert row["verdict"] == "plausible", row["reason"]


def test_the_serving_evidence_loader_refuses_a_malformed_row(tmp_path):
    head = ",".join(f for f in evidence.ServingFigure.__dataclass_fields__) + "\n"
    path = tmp_path / "s.csv"
    path.write_text(head + "H200,e,llama2-7b,fp8,1,1,128,128,100,0.1,src,2024\n")
    with pytest.raises(UserError, match="line 2: give either tokens_per_s_per_gpu"):
        evidence.serving_figures(path)
    path.write_text(head + "H200,e,llama2-7b,int3,1,1,128,128,100,,src,2024\n")
    with pytest.raises(UserError, match="precision 'int3'"):
        evidence.serving_figures(path)
