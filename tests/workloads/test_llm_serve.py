"""llm-serve at tiny size through the real runner, and the serving model's known answers."""

from __future__ import annotations

import json

import pytest

from gpuarena.analysis.physics.serving_model import prefill_mfu
from gpuarena.analysis.verbs import serving as S
from gpuarena.analysis.verbs.serving_curves import curves
from gpuarena.data import catalog
from gpuarena.workloads.llm import flops as M
from gpuarena.workloads.llm.flops import prefill_flops, request_flops
from gpuarena.workloads.llm.serve import LLMServe
from gpuarena.workloads.llm.shapes import SHAPES
from gpuarena.store.rows import validated
from tests.workloads.conftest import assert_ok, run_entries

LLAMA3_8B = SHAPES["llama3-8b"]


def test_seed_static_and_compile_through_runner(db_path, smoke_run):
    """seed, static-cache and membw are the session's smoke run (batch 1); compile is run here alike."""
    from gpuarena.store.db import Store

    store = Store(smoke_run[0], readonly=True)
    smoke = [r for r in store.results() if r.workload in ("llm-serve", "membw")]
    store.close()
    rs = smoke + run_entries(db_path, [{"workload": "llm-serve", "variants": ["compile"]}], repeats=2)
    serve = [r for r in rs if r.workload == "llm-serve"]
    assert [r.variant for r in serve] == ["seed", "static-cache", "compile"]
    for r in serve:
        assert_ok(r)
        e = r.extra
        # 1 warm-up + 2 timed requests after the first: 2 requests of 8 tokens, batch 1
        assert r.unit == "tokens/s" and r.items_per_step == 1 * 8
        assert e.requests_measured == 3 and e.batch == 1
        assert e.tpot_ms_median > 0 and e.tpot_ms_p99 >= e.tpot_ms_median and e.ttft_s > 0
        assert e.decode_tokens_per_s == pytest.approx(1 / (e.tpot_ms_median / 1e3))
        assert e.prefill_tokens_per_s == pytest.approx(1 * 16 / e.ttft_s)
        assert e.decode_bandwidth_gbs == pytest.approx(e.decode_bytes_per_step / e.tpot_ms_median * 1e-6)
        assert e.weights_bytes == 4 * M.param_counts(SHAPES["tiny"])[0]   # fp32 on the CPU
        assert r.flops_per_item == pytest.approx(request_flops(SHAPES["tiny"], 16, 8) / 8)
    dyn, static, compiled = (r.extra for r in serve)
    # the grown cache ends at prompt + 7 decoded tokens; the static one holds prompt + 8 from the start
    assert dyn.kv_cache_bytes == M.kv_cache_bytes(SHAPES["tiny"], 1, 16 + 7, 4)
    assert static.kv_cache_bytes == compiled.kv_cache_bytes == M.kv_cache_bytes(SHAPES["tiny"], 1, 24, 4)
    assert compiled.decode == "torch.compile reduce-overhead"
    assert compiled.prefill == "torch.compile, dynamic prompt length" and static.prefill == "eager"
    assert compiled.inductor == {"coordinate_descent_tuning": True} and compiled.projections == "separate"
    # decode_attention=auto: FlexAttention's decode kernel under compile, SDPA's in eager
    assert compiled.decode_attention == "flex" and static.decode_attention == dyn.decode_attention == "sdpa"
    assert serve[2].compile_s > 0
    # read time: the decode share of the membw result stored beside it
    (curve,) = [c for c in curves(rs) if c.variant == "seed"]
    share = curve.points[0].decode_share_of_membw
    membw = next(r for r in rs if r.workload == "membw").throughput_median
    assert share == pytest.approx(dyn.decode_bandwidth_gbs / membw)


def test_bad_config_refused(db_path, cli, tmp_path):
    out = cli("run", "-w", "llm-serve", "--set", f"hf_config={tmp_path / 'nope.json'}", "--db", db_path)
    assert out.returncode == 2 and "hf_config" in out.stderr
    out = cli("run", "-w", "llm-serve", "--set", "size=tiny", "--set", "prompt_len=250", "--db", db_path)
    assert out.returncode == 2 and "max_seq_len 256" in out.stderr


def test_search_finds_the_cap(db_path):
    (r,) = run_entries(db_path, [{"workload": "llm-serve", "variants": ["static-cache"],
                                  "params": {"search": "max-batch"}}], repeats=1)
    assert_ok(r)
    e = r.extra
    assert e.max_batch == 4 and e.capped and e.batch == 4 and r.items_per_step == 4 * 8


def test_kv_concurrency_known_answers():
    # Llama 3 8B: 8.03 B parameters, 128 KiB of bf16 keys and values per token.
    total, dense = M.param_counts(LLAMA3_8B)
    assert total == 8_030_261_248
    assert M.kv_cache_bytes(LLAMA3_8B, 1, 1) == 131_072
    # H200: 141 GB x 0.9 - 16.06 GB of weights = 110.85 GB over 1 GiB per 8192-token sequence
    h200 = catalog.match("H200")
    kv = S.kv_concurrency(LLAMA3_8B, h200.memory_gb * 1e9, 8192)
    assert kv["weights_bytes"] == 2 * total and kv["kv_bytes_per_sequence"] == 2**30
    assert kv["max_batch"] == 103
    assert S.kv_concurrency(LLAMA3_8B, 80e9, 8192)["max_batch"] == 52
    assert S.kv_concurrency(LLAMA3_8B, 16e9, 8192)["max_batch"] == 0        # the weights alone do not fit
    assert S.kv_concurrency(LLAMA3_8B, 80e9, 8192, precision="fp8")["max_batch"] == 59


def test_decode_bytes_model_known_answer():
    # batch 1 at 512 tokens: 7.505 B non-embedding weights in bf16, one embedding row, 512 x 128 KiB of KV
    dense = M.param_counts(LLAMA3_8B)[1]
    assert dense == 7_504_924_672
    want = 2 * dense + 2 * 4096 + 512 * 131_072
    assert M.decode_bytes_per_step(LLAMA3_8B, 1, 512) == want
    # at the H200's 4.8 TB/s that is the ceiling of batch-1 decode: ~318 tokens/s
    p = S.projected_decode(LLAMA3_8B, 4800, 989, 1, 512)
    assert p["bound"] == "memory" and p["tokens_per_s"] == pytest.approx(4800e9 / want)
    assert 315 < p["tokens_per_s"] < 320
    # prefill counts the output head once per sequence
    assert prefill_flops(LLAMA3_8B, 512) == pytest.approx(512 * M.flops_per_token(LLAMA3_8B, 512, False)
                                                          - 511 * 2 * 128256 * 4096)
    assert LLMServe.executed_precision(frozenset({"compile", "fp8-weights"}), "hopper")["matmul"] == "fp8"
    assert LLMServe.peak_precision(frozenset({"seed"}), "hopper") == "bf16"
    # prefill MFU is read against the catalog's dense peak (H200 bf16: 989.4 TFLOP/s)
    row = validated({"id": 1, "case_key": "k", "workload": "llm-serve", "variant": "seed", "status": "ok",
                     "throughput_median": 1.0, "params": {}, "device_name": "NVIDIA H200", "precision": "bf16",
                     "extra": {"prefill_tflops": 593.4}})
    assert catalog.match("H200").peak("bf16") == pytest.approx(989.4)
    assert prefill_mfu(row) == pytest.approx(593.4 / 989.4)
    assert prefill_mfu(validated({**row.row(), "device_name": "CPU: AMD EPYC"})) is None


def test_advise_ranks_catalog(cli, tmp_path):
    out = cli("advise", "-w", "llm-serve", "--set", "context=8192", "--format", "json",
              "--db", str(tmp_path / "none.db"))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    rows = {r["gpu"]: r for r in data["rows"]}
    h200 = rows["NVIDIA H200 SXM 141GB"]
    assert h200["max_batch"] == 103 and h200["bound"] == "memory"
    tps = [r["tokens_per_s"] for r in data["rows"]]
    assert tps == sorted(tps, reverse=True)
    assert "KV cache per sequence" in data["explanation"]
    bad = cli("advise", "-w", "llm-serve", "--set", "context=abc", "--db", str(tmp_path / "none.db"))
    assert bad.returncode == 2


def test_report_serving_section(db_path, tmp_path):
    from gpuarena.report import markdown
    from gpuarena.report.build import gather
    from gpuarena.report.serving import kv_section
    from gpuarena.store.db import Store

    rs = run_entries(db_path, [{"workload": "llm-serve", "variants": ["seed"],
                                "grid": {"batch_size": [1, 2]}, "params": {"slo_ms": 1000}}], repeats=1)
    report = gather(Store(db_path))
    (sec,) = [s for s in report.sections if s.id == "serving"]
    table, slo = sec.tables
    assert [row[1] for row in table.rows] == ["1", "2"]
    # one engine recipe: the SLO table names it (variant and decode attention) and its capacity
    (cap,) = slo.rows
    assert "seed, sdpa decode attention" in cap[0] and cap[1:] == ["1000", "2", "2", "-"]
    # and the engine's version: a curve joins a batch timed by an older version only where no version
    # since changed the code that timed it (seed: none since v1; llm/versions.py), and says so
    v = rs[0].workload_version
    assert cap[0].endswith(f" · llm-serve v{v}")
    older = rs[1].model_copy(update={"workload_version": v - 1})
    (joined,) = curves([rs[0], older])
    assert len(joined.points) == 2 and joined.timed_by == [v - 1, v]
    # a static cache at v1 (one buffer per layer since): kept apart from today's, labelled with what changed it
    static = [x.model_copy(update={"variant": "static-cache"}) for x in rs]
    old = static[0].model_copy(update={"workload_version": 1})
    assert [(c.current, c.changed_by) for c in curves([old, static[1]])] == [(True, []), (False, [2])]
    assert sec.charts
    assert "Throughput and latency by batch" in markdown.render(report)
    # a full-size llama3-8b setting on an H200: the catalog's GPUs at its context, by the model
    (curve,) = curves(rs)
    curve = curve.model_copy(update={"model": "llama3-8b", "prompt_len": 512, "new_tokens": 128,
                                     "gpu": "NVIDIA H200 SXM 141GB"})
    kv = kv_section(curve, rs)
    rows = {r[0]: r for r in kv.tables[0].rows}
    assert rows["NVIDIA H200 SXM 141GB (measured here)"][2] == str(
        S.kv_concurrency(LLAMA3_8B, 141e9, 640)["max_batch"])


def test_max_sweep_stops_at_the_first_oom(db_path, tmp_path):
    # One wide feed-forward layer over a 2048-token prompt: ~0.4 GB per sequence in the prefill,
    # so under a real 1 GB cap batch 2 fits and batch 4 does not; batch 8 is then not run.
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
                               "num_key_value_heads": 2, "intermediate_size": 16384, "vocab_size": 256,
                               "max_position_embeddings": 4096}))
    rs = run_entries(db_path, [{"workload": "llm-serve", "variants": ["static-cache"],
                                "params": {"hf_config": str(cfg), "prompt_len": 2048, "new_tokens": 2,
                                           "batch_size": "max", "search_max": 8}}],
                     repeats=1, env={"GPUARENA_MEMORY_CAP_MB": "1024"})
    assert [(r.params["batch_size"], r.status) for r in rs] == [(1, "ok"), (2, "ok"), (4, "oom"),
                                                                (8, "skipped")]
    assert "batch_size=4 already ran out of memory" in rs[3].error
    (curve,) = curves(rs)
    assert curve.largest_fit == 2 and curve.oom_batch == 4
