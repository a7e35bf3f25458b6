"""The one LLM-training model (issue 39, symptoms 2, 4 and 5): plans at an MFU from evidence by model size,
GPU generation and GPU count, a network per system, no duration for a plan that does not fit, advise ranking
GPUs on one plan, FP8 claims bounded by their parts, all-reduce ratios judged against a band."""

from __future__ import annotations

import json

import pytest

from gpuarena.analysis.physics import llm_efficiency as E
from gpuarena.analysis.physics import ratio
from gpuarena.data import catalog
from gpuarena.data.training_evidence import training_runs
from gpuarena.errors import UserError
from gpuarena.store.rows import validated

H100 = "H100 80GB SXM5"
# torchtitan, Llama 3.1 8B on 8 H100s, FSDP + torch.compile: 6,667 tokens/s per GPU at 8,192 tokens
# (benchmarks/llama3_h100_202412_torchtitan.md, Table 1): 15T tokens take 15e12 / (8 x 6,667) s
TORCHTITAN_DAYS = 15e12 / (8 * 6667) / 86400


def _plan(cli, db_path, *extra):
    p = cli("whatif", "-w", "llm-train", "--model", "llama3-8b", "--tokens", "15e12", "--n", "8", "--format",
            "json", "--db", db_path, *extra)
    return p, (json.loads(p.stdout)["plans"][0] if p.returncode == 0 else None)


def test_whatif_8b_on_8_h100_runs_at_torchtitans_mfu_with_its_band(cli, db_path):
    p, plan = _plan(cli, db_path, "--gpu", H100)
    assert p.returncode == 0, p.stderr
    row = plan["rows"][0]
    assert plan["mfu"] == pytest.approx(0.39, abs=0.005) and "torchtitan" in plan["mfu_from"]
    assert row["days"] == pytest.approx(TORCHTITAN_DAYS, rel=0.01)     # not 1,827 days at a 1B model's 0.58
    # the band: torchtitan's eager FSDP on 128 GPUs (5,605 tokens/s per GPU) is the slowest comparable run
    assert row["days_low"] == pytest.approx(row["days"]) and row["days_high"] == pytest.approx(
        15e12 / (8 * 5605) / 86400, rel=0.01)
    assert plan["seq_len"] == 8192                                     # the model's context, not 2,048
    p2, short = _plan(cli, db_path, "--gpu", H100, "--seq-len", "2048")
    assert p2.returncode == 0 and short["seq_len"] == 2048 and short["rows"][0]["days"] < row["days"]


def test_a_generation_without_evidence_needs_mfu(cli, db_path):
    p, _ = _plan(cli, db_path, "--gpu", "L40S")
    assert p.returncode == 2 and "Ada" in p.stderr and "--mfu" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    p, plan = _plan(cli, db_path, "--gpu", "L40S", "--mfu", "0.3")
    assert p.returncode == 0 and plan["mfu"] == pytest.approx(0.3)


def test_64_l40s_need_a_network_figure_and_accept_busbw(cli, db_path):
    args = ("whatif", "-w", "llm-train", "--model", "llama3-8b", "--tokens", "15e12", "--gpu", "L40S", "--n", "64",
            "--mfu", "0.3", "--db", db_path)
    p = cli(*args)
    assert p.returncode == 2 and "--busbw" in p.stderr and "HDR" not in p.stderr + p.stdout
    p = cli(*args, "--busbw", "12.5", "--format", "json")
    assert p.returncode == 0, p.stderr
    plan = json.loads(p.stdout)["plans"][0]
    assert plan["assumptions"]["network_gbs_per_gpu"] == 12.5 and "--busbw" in plan["assumptions"]["network_source"]
    # a DGX card has its system's network; --busbw within one node is refused (it is the bandwidth between nodes)
    p = cli("whatif", "-w", "llm-train", "--model", "llama3-8b", "--gpu", H100, "--n", "8", "--busbw", "50",
            "--db", db_path)
    assert p.returncode == 2 and "between nodes" in p.stderr


def test_a_slow_network_bounds_the_step(cli, db_path):
    """With an MFU the step is still no shorter than its traffic: 64 L40S at 0.1 GB/s between nodes are link-bound."""
    p = cli("whatif", "-w", "llm-train", "--model", "llama3-8b", "--tokens", "1e12", "--gpu", "L40S", "--n", "64",
            "--mfu", "0.3", "--busbw", "0.1", "--format", "json", "--db", db_path)
    row = next(r for r in json.loads(p.stdout)["plans"][0]["rows"] if r["fits"])
    assert row["traffic_s"] > row["compute_s"] and row["step_s"] == pytest.approx(row["traffic_s"])
    assert row["mfu"] < 0.3 and "links" in row["bound"]


def test_a_plan_that_does_not_fit_prints_no_duration(cli, db_path):
    p = cli("whatif", "-w", "llm-train", "--model", "llama3-70b", "--tokens", "15e12", "--gpu", H100, "--n", "8",
            "--mfu", "0.4", "--db", db_path)
    assert p.returncode == 0 and "no duration: does not fit" in p.stdout and "GB per GPU" in p.stdout
    p = cli("whatif", "-w", "llm-train", "--model", "llama3-70b", "--tokens", "15e12", "--gpu", H100, "--n", "8",
            "--mfu", "0.4", "--format", "json", "--db", db_path)
    rows = json.loads(p.stdout)["plans"][0]["rows"]
    assert all(not r["fits"] and r["days"] is None and "needs" in r["why"] for r in rows)


def test_advise_ranks_gpus_on_one_training_plan(cli, db_path):
    p = cli("advise", "-w", "llm-train", "--set", "shape=llama3-8b", "--set", "tokens=15e12", "--gpus", "8",
            "--format", "json", "--db", db_path)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    rows = {r["gpu"]: r for r in out["rows"]}
    h100 = rows[catalog.match(H100).name]
    assert h100["days"] == pytest.approx(TORCHTITAN_DAYS, rel=0.01) and h100["usd"] > 0
    assert [r["rank"] for r in out["rows"]] == list(range(1, len(out["rows"]) + 1))
    assert all(a["days"] <= b["days"] for a, b in zip(out["rows"], out["rows"][1:]))
    a100 = rows[catalog.match("A100 80GB SXM4").name]
    assert a100["days"] > h100["days"] and "torchtitan" in a100["mfu_from"]     # A100 evidence, its own MFU
    left = {x["gpu"]: x["reason"] for x in out["excluded"]}
    assert "--mfu" in left[catalog.match("L40S").name]
    # the same MFU given for all: every card with the peak is ranked, the L40S too
    p = cli("advise", "-w", "llm-train", "--set", "shape=llama3-8b", "--set", "mfu=0.35", "--gpus", "8",
            "--format", "json", "--db", db_path)
    assert catalog.match("L40S").name in {r["gpu"] for r in json.loads(p.stdout)["rows"]}
    p = cli("advise", "-w", "llm-train", "--gpus", "8", "--db", db_path)
    assert p.returncode == 2 and "shape=" in p.stderr
    p = cli("advise", "-w", "llm-train", "--set", "shape=llama3-8b", "--set", "tokens=lots", "--db", db_path)
    assert p.returncode == 2 and "tokens" in p.stderr


def test_fp8_training_claims_are_bounded_by_their_parts(cli, db_path):
    base = ("check", "-w", "llm-train", "--gpu", H100, "--precision", "fp8", "--batch-size", "2", "--gpus", "8",
            "--seq-len", "8192", "--set", "shape=llama3-8b", "--format", "json")
    env = {"GPUARENA_DB": db_path}          # no database: the published evidence alone
    at85 = json.loads(cli(*base, "--throughput", "232352", env=env).stdout)[0]       # 85% of the FP8 peak
    assert at85["verdict"] == "implausible" and "unverified" in at85["reason"] and "BF16 peak" in at85["reason"]
    tt = json.loads(cli(*base, "--throughput", "68256", env=env).stdout)[0]          # torchtitan's Float8 run
    assert tt["verdict"] == "plausible"
    cfg = E.model_config("llama3-8b")
    bound, _ = E.fp8_bound(cfg, 8192, catalog.match(H100))
    assert 0.6 < bound < 0.7 and E.fp8_bound(cfg, 2048, catalog.match(H100))[0] > bound


@pytest.mark.parametrize("claimed,verdict", [(2.0, "plausible"), (2.5, "plausible"),
                                             # nccl #1374: H800 x8 NVLS 215 GB/s; H100 x8 NVLS 480 (nccl-tests
                                             # #212), ring 370 (nccl #1455): 2.23x and 1.72x
                                             (480 / 215, "plausible"), (370 / 215, "plausible"),
                                             (1.2, "implausible"), (4.0, "implausible")])
def test_h800_h100_allreduce_ratio_against_each_sides_range(claimed, verdict):
    r = ratio.check_multi_gpu_ratio("allreduce", "H800", H100, 8, claimed, claimed, "allreduce")
    assert r["verdict"] == verdict, r["reason"]
    assert r["expected_low"] < r["modelled"] < r["expected_high"]


def test_allreduce_ratio_claim_through_the_cli_needs_no_throughput(cli, db_path):
    p = cli("check", "-w", "allreduce", "--gpu", "H800", "--vs", H100, "--gpus", "8", "--ratio", "2.5",
            env={"GPUARENA_DB": db_path})
    assert p.returncode == 0 and "plausible" in p.stdout and "implausible" not in p.stdout


def test_training_evidence_loads_and_is_refused_line_by_line(tmp_path):
    runs = training_runs()
    assert len(runs) >= 15 and all(catalog.match(r.gpu) for r in runs)
    assert all(r.model in E.PLAN_SHAPES for r in runs)
    bad = tmp_path / "t.csv"
    bad.write_text("gpu,gpus,model,seq_len,precision,tokens_per_gpu_s,recompute,layout,engine,source,date,note\n"
                   "H100 80GB SXM5,8,llama3-8b,8192,int8,1,none,FSDP,x,y,2024,\n")
    with pytest.raises(UserError, match="line 2"):
        training_runs(bad)


def test_a_stored_run_of_comparable_scale_is_evidence():
    peak = catalog.match("H200").peak("bf16")
    r = validated({"workload": "llm-train", "status": "ok", "precision": "bf16", "gpus": 1, "variant": "bf16",
                   "id": 3, "case_key": "k", "throughput_median": 1e4, "device_name": "NVIDIA H200",
                   "tflops": 0.58 * peak, "params": {"shape": "llama-1b"}, "extra": {"shape": "llama-1b"}})
    e = E.efficiency("llama-1b", catalog.match("H200"), 1, "bf16", [r])
    assert e.mfu == pytest.approx(0.58) and "measured" in e.source
    with pytest.raises(UserError, match="--mfu"):       # no 1B run on the H200 without it
        E.efficiency("llama-1b", catalog.match("H200"), 1, "bf16", [])


def test_a_measured_curves_small_messages_do_not_widen_the_band(cli, tmp_path):
    """The H200 x2 bundle's all-reduce curve runs from KiB messages (latency-bound, a few GB/s) to 4 GiB: only
    its large-message plateau is evidence of what a card's link reaches (a 0-24,000x band was printed)."""
    from pathlib import Path

    from gpuarena.store.db import Store

    db = tmp_path / "x2.db"
    bundle = Path(__file__).parents[2] / "docs" / "data" / "h200-x2-2026-11-29.json"
    assert cli("import", str(bundle), "--db", str(db)).returncode == 0
    store = Store(str(db))
    try:
        with_db = ratio.busbw_band(catalog.match("H800"), 8, store)
    finally:
        store.close()
    assert with_db[:2] == pytest.approx(ratio.busbw_band(catalog.match("H800"), 8)[:2], rel=0.01)
