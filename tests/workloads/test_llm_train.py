"""llm-train at the tiny shape: the real CLI, torchrun launcher and database; layouts over gloo."""

from __future__ import annotations

import json

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from gpuarena.analysis.rows.derived import with_derived
from gpuarena.analysis.rows.scaling import efficiency
from gpuarena.errors import UserError
from gpuarena.report.build import gather
from gpuarena.store.db import Store
from gpuarena.store.result import Result
from gpuarena.workloads import registry
from gpuarena.workloads.base import StepContext
from gpuarena.analysis.rows.mfu import mfu
from gpuarena.measure import profile
from gpuarena.workloads.llm import fp8
from gpuarena.workloads.llm import layout as lay
from gpuarena.workloads.llm.flops import flops_per_token, param_counts
from gpuarena.workloads.llm.shapes import SHAPES
from tests.workloads.conftest import assert_ok

LLM = registry.get("llm-train")


def _results(db_path: str) -> list[Result]:
    """Stored results with the figures computed when read (scaling efficiency)."""
    return with_derived(Store(db_path).results())


@pytest.mark.slow   # torchrun per case: about 20-25 s on 2 shared cores
def test_single_rank_recipes_and_fp8_skipped(cli, smoke_copy):
    """The seed recipe is the session's smoke run; bf16 and fp8 are run beside it, in a copy."""
    db_path = smoke_copy
    p = cli("run", "-w", "llm-train", "--device", "cpu", "--db", db_path, "-q", "--set", "size=tiny",
            "--set", "repeats=2", "-v", "bf16+activation-checkpointing+fused-adamw", "-v", "fp8")
    assert p.returncode == 0, p.stderr[-3000:]
    seed, bf16, fp8 = [r for r in _results(db_path) if r.workload == "llm-train"]
    for r in (seed, bf16):
        assert_ok(r)
        e = r.extra
        assert r.unit == "tokens/s" and r.items_per_step == 2 * 32        # tiny: batch 2 x seq 32
        assert r.flops_per_item == flops_per_token(SHAPES["tiny"], 32, training=True)
        assert e.tokens_per_s_per_gpu == pytest.approx(r.throughput_median)
        assert e.parallel == "none" and e.mesh_shape == [1] and e.world_size == 1
        # random tokens over a 256-word vocabulary: the loss starts near ln 256 and stays finite
        assert abs(e.loss_first - torch.log(torch.tensor(256.0)).item()) < 0.5
        assert torch.isfinite(torch.tensor(e.loss_last)) and not e.nan
        assert not {"mfu", "peak_tflops"} & e.model_fields_set   # MFU is computed when read (analysis/rows/mfu.py)
        assert r.tflops > 0 and mfu(r) is None               # ... and a CPU has no catalog peak
    assert seed.precision == "default" and bf16.precision == "bf16"
    assert bf16.extra.executed_precision == {"matmul": "bf16", "attention": "bf16", "elementwise": "bf16"}
    assert bf16.extra.fused_adamw is True
    assert fp8.status == "skipped" and "compute capability 8.9" in fp8.error and "cpu" in fp8.error
    # the report's llm-train section lists both measured recipes with their tokens/s
    section = next(s for s in gather(Store(db_path)).sections if s.id == "decoder-training")
    table = section.tables[0]
    assert [row[3] for row in table.rows] == ["seed", "bf16+activation-checkpointing+fused-adamw"]
    assert "tokens/s per GPU" in [h for h, _ in table.columns]


@pytest.mark.slow
def test_fsdp_and_tp_over_gloo(cli, db_path):
    """2 ranks through torchrun: FSDP2 at 1 and 2 ranks (scaling efficiency against 1), TP=2."""
    for args in (("--gpus", "1,2", "--set", "parallel=fsdp", "-v", "bf16"),
                 ("--gpus", "2", "--set", "parallel=tp", "-v", "fused-adamw")):
        p = cli("run", "-w", "llm-train", "--device", "cpu", "--db", db_path, "-q", "--set", "size=tiny",
                "--set", "repeats=2", *args)
        assert p.returncode == 0, p.stderr[-3000:]
    one, two, tp = _results(db_path)
    for r in (one, two, tp):
        assert_ok(r)
    assert one.extra.mesh_shape == [1] and two.extra.mesh_shape == [2]
    assert two.items_per_step == 2 * 2 * 32                      # batch 2 x seq 32 on each of 2 ranks
    assert two.extra.dp_degree == 2 and two.extra.tp_degree == 1
    assert two.extra.tokens_per_s_per_gpu == pytest.approx(two.throughput_median / 2)
    assert two.derived.scaling_efficiency == pytest.approx(
        efficiency(two.throughput_median, 2, one.throughput_median))
    # TP: both ranks work on one batch, so the world makes batch x seq tokens per step
    assert tp.items_per_step == 2 * 32 and tp.extra.tp_degree == 2 and tp.extra.dp_degree == 1
    for r in (two, tp):
        e = r.extra
        assert e.comm_total_s > 0 and 0 <= e.comm_exposed_s <= e.comm_total_s + 1e-9
        assert 0 < e.comm_exposed_share and len(e.per_rank) == 2
        assert abs(e.loss_last - e.loss_first) < 1.0


def test_bad_layouts_and_paths_are_refused(cli, db_path, tmp_path):
    assert lay.layout("fsdp+tp", 2, 4) == (2, 2) and lay.layout("tp", 0, 2) == (1, 2)
    with pytest.raises(UserError, match="parallel=none runs on one rank"):
        lay.layout("none", 0, 2)
    with pytest.raises(UserError, match="does not divide"):
        lay.layout("fsdp+tp", 3, 4)
    with pytest.raises(UserError, match="needs --set tp"):
        lay.layout("fsdp+tp", 0, 4)
    with pytest.raises(UserError, match="must all divide"):
        lay.check_tp(SHAPES["tiny"], 4)          # 2 KV heads
    p = cli("run", "-w", "llm-train", "--device", "cpu", "--db", db_path, "--set", "size=tiny", "--gpus", "2")
    assert p.returncode == 2 and "parallel=none runs on one rank" in p.stderr
    p = cli("run", "-w", "llm-train", "--device", "cpu", "--db", db_path, "--set", "size=tiny",
            "--set", f"hf_config={tmp_path / 'missing.json'}")
    assert p.returncode == 2 and "no such file" in p.stderr
    p = cli("run", "-w", "llm-train", "--device", "cpu", "--db", db_path, "--set", "size=tiny",
            "--set", f"hf_config={tmp_path}")
    assert p.returncode == 2 and "not a file" in p.stderr


def test_hf_config_and_class_facts(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
                               "num_key_value_heads": 1, "intermediate_size": 96, "vocab_size": 300}))
    p = LLM.resolve_params({"hf_config": str(cfg)}, size="tiny")
    total, non_emb = LLM.param_count(p), param_counts(LLM.config(p))[1]
    assert total - non_emb == 300 * 64
    assert LLM.flops(p) == 6 * non_emb + 12 * 3 * 64 * 32
    assert LLM.executed_precision({"fp8", "bf16"}) == {"matmul": "fp8", "attention": "bf16", "elementwise": "bf16"}
    assert LLM.executed_precision({"seed"})["matmul"] == "fp32"
    assert LLM.kind == "training" and LLM.rank_aggregate == "sum" and LLM.dominant_op == "matmul"


def test_fp8_filter_skips_head_and_odd_dims():
    keep = fp8.eligible(tp=2)
    assert keep(torch.nn.Linear(64, 64), "layers.0.attention.wq")
    assert not keep(torch.nn.Linear(64, 256), "output")
    assert not keep(torch.nn.Linear(64, 48), "layers.0.feed_forward.w1")   # 48 / tp 2 = 24
    assert not keep(torch.nn.Linear(40, 64), "layers.0.attention.wo")


def test_flops_per_token_matches_flop_counter():
    """6 N against PyTorch's FLOP counter on one tiny training step.  The counter has no
    formula for the CPU's SDPA kernel, so the 12 L H T attention term is left out here."""
    p = LLM.resolve_params({}, size="tiny")
    wl = registry.runnable("llm-train")(StepContext(device=torch.device("cpu"), variants=frozenset({"seed"}), params=p))
    wl.setup()
    with FlopCounterMode(display=False) as fc:
        wl.step()
    tokens, cfg = p["batch_size"] * p["seq_len"], SHAPES["tiny"]
    matmuls = wl.flops_per_item() - 12 * cfg.n_layers * cfg.dim * p["seq_len"]
    assert fc.get_total_flops() == pytest.approx(matmuls * tokens, rel=0.01)   # norms' weights: 0.4%


def test_comm_timeline_counts_only_uncovered_communication():
    a, b = profile.union([(0, 10), (5, 12), (20, 30)]), profile.union([(8, 25)])
    assert a == [(0, 12), (20, 30)] and profile.overlap(a, b) == 4 + 5
