"""Other serving tools' result files: recognised by content, figures recomputed from their
per-request records, the tool's summary kept beside with the reason for each difference, and the
result in engines and cost like a measured one.  The fixture is a `vllm bench serve --save-result
--save-detailed` JSON written from vLLM's format (benchmark_serving.py save_result; its summary
computed the way calculate_metrics does, with each request's latency running 5 ms past its last
chunk, as a stream's close does)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuarena.store.db import Store

VLLM = Path(__file__).parent / "fixtures" / "vllm_bench_serve.json"


def test_vllm_file_recomputed_and_compared(cli, db_path):
    out = cli("import", str(VLLM), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0, out.stderr
    assert "imported 1 result(s) of vllm bench serve" in out.stdout and "per-request records" in out.stdout
    # vLLM's latency counts the stream's close: its TPOT and E2E are above the ones rebuilt from chunks
    assert "tpot_ms mean: recomputed 20, the tool's 20.71; TPOT = (E2E - TTFT) / (tokens - 1) in both" in out.stdout
    assert "e2e_ms mean: recomputed 200, the tool's 205; E2E here is TTFT + the chunk gaps" in out.stdout
    assert "ttft_ms" not in out.stdout and "output_tokens_per_s" not in out.stdout   # these agree
    (r,) = Store(db_path).results()
    e = r.extra
    assert r.workload == "endpoint-serve" and r.source == "imported" and r.device_name == "H200"
    assert (e.completed, e.failed, e.errors) == (3, 1, {"http_5xx": 1})
    assert e.ttft_ms.mean == pytest.approx(60) and e.itl_ms.p50 == pytest.approx(20)
    assert e.tpot_ms.mean == pytest.approx(20) and e.output_tokens_per_s == pytest.approx(48)
    assert e.tool_summary["mean_tpot_ms"] == pytest.approx(20.714, abs=1e-3)
    assert r.params["prompt_len"] == 512 and r.params["output_len"] == 8 and r.params["concurrency"] == 2
    again = cli("import", str(VLLM), "--gpu", "H200", "--db", db_path)
    assert again.returncode == 0 and "1 already present" in again.stdout and len(Store(db_path).results()) == 1
    eng = cli("engines", "--db", db_path)
    assert eng.returncode == 0 and "vllm (via vllm bench serve)" in eng.stdout
    assert cli("cost", "-w", "endpoint-serve", "--db", db_path).returncode == 0


def test_summary_only_file_keeps_the_tools_figures(cli, db_path, tmp_path):
    d = json.loads(VLLM.read_text())
    for k in ("input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"):
        d.pop(k)
    f = tmp_path / "summary.json"
    f.write_text(json.dumps(d))
    out = cli("import", str(f), "--db", db_path)
    assert out.returncode == 0 and "the tool's own summary" in out.stdout, out.stderr
    (r,) = Store(db_path).results()
    assert r.extra.tpot_ms.mean == pytest.approx(20.714, abs=1e-3) and r.extra.output_tokens_per_s == 48


def test_bad_files_are_one_line_and_exit_2(cli, db_path, tmp_path):
    d = json.loads(VLLM.read_text())
    d["itls"] = d["itls"][:2]
    cases = {"unknown.json": json.dumps({"hello": 1}), "short.json": json.dumps(d), "text.json": "not json"}
    for name, body in cases.items():
        f = tmp_path / name
        f.write_text(body)
        out = cli("import", str(f), "--db", db_path)
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, (name, out.stderr)
    assert not Path(db_path).exists() or Store(db_path).results() == []


FIX = Path(__file__).parent / "fixtures"


def test_sglang_jsonl_one_result_per_run(cli, db_path):
    out = cli("import", str(FIX / "sglang_bench_serving.jsonl"), "--gpu", "H100", "--db", db_path)
    assert out.returncode == 0 and "imported 2 result(s) of sglang bench_serving" in out.stdout, out.stderr
    a, b = sorted(Store(db_path).results(), key=lambda r: r.params["rate"])
    assert (a.params["rate"], b.params["rate"]) == ("4", "8")
    assert a.extra.imported_from["figures"].startswith("recomputed") and a.extra.completed == 2
    assert a.extra.ttft_ms.mean == pytest.approx(45) and a.extra.tpot_ms.mean == pytest.approx(11)
    # SGLang's own E2E counts the stream's close (107.5 ms against 100 rebuilt from the chunks)
    assert any(x.startswith("e2e_ms mean: recomputed 100, the tool's 107.5") for x in a.extra.tool_differences)
    assert b.extra.imported_from["figures"].startswith("the tool's own") and b.extra.ttft_ms.mean == 60


def test_llmperf_inter_token_latency_is_not_tpot(cli, db_path):
    out = cli("import", str(FIX / "llama-3-8b_550_11_summary.json"), "--db", db_path)
    assert out.returncode == 0, out.stderr
    (r,) = Store(db_path).results()
    e = r.extra
    # 1.5 s for 11 tokens after a 0.5 s first token: TPOT (1.5 - 0.5) / 10 = 100 ms; LLMPerf says 1.5 / 11
    assert e.tpot_ms.mean == pytest.approx(100) and (e.completed, e.failed) == (3, 1)
    assert any(x.startswith("tpot_ms mean: recomputed 100, the tool's 136.4; LLMPerf's inter-token latency is a "
                            "request's whole time, first token included") for x in e.tool_differences)
    assert e.ttft_ms.mean == pytest.approx(500) and e.tool_summary["results_num_completed_requests_per_min"] == 36


def test_genai_perf_and_mlperf_summaries(cli, db_path):
    out = cli("import", str(FIX / "profile_export_genai_perf.json"), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0 and "genai-perf" in out.stdout, out.stderr
    out = cli("import", str(FIX / "mlperf_log_summary.txt"), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0 and "mlperf loadgen" in out.stdout, out.stderr
    assert "not gpuarena's definition: tpot_ms mean 21.96 (the tool's)" in out.stdout
    g, m = sorted(Store(db_path).results(), key=lambda r: r.extra.imported_from["tool"])
    # GenAI-Perf's inter-token latency is (latency - TTFT) / (tokens - 1): stored as gpuarena's TPOT
    assert g.extra.tpot_ms.p50 == 5.4 and g.extra.ttft_ms.p99 == 200 and g.extra.output_tokens_per_s == 320
    assert g.params["concurrency"] == 4 and g.params["model"] == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert m.extra.ttft_ms.mean == pytest.approx(503.858725) and m.extra.output_tokens_per_s == 1234.5
    assert m.extra.tpot_ms is None and m.params["rate"] == "12.5"
    assert m.extra.engine == "MLPerf loadgen Server scenario (via mlperf loadgen)"
    out = cli("import", str(FIX / "profile_export_aiperf.json"), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0 and "of aiperf" in out.stdout, out.stderr
    (a,) = [r for r in Store(db_path).results() if r.extra.imported_from["tool"] == "aiperf"]
    assert a.extra.ttft_ms.p50 == 15.34 and a.extra.tpot_ms.mean == 4.9 and a.params["concurrency"] == 8


def test_imported_results_in_engines_cost_and_report(cli, db_path, tmp_path):
    for f in ("vllm_bench_serve.json", "profile_export_genai_perf.json", "mlperf_log_summary.txt"):
        assert cli("import", str(FIX / f), "--gpu", "H200", "--db", db_path).returncode == 0
    eng = cli("engines", "--db", db_path, "-f", "json")
    engines = {r["engine"] for r in json.loads(eng.stdout)["rows"]}
    assert eng.returncode == 0 and {"vllm (via vllm bench serve)", "openai-compatible server (via genai-perf)",
                                    "MLPerf loadgen Server scenario (via mlperf loadgen)"} == engines
    assert cli("cost", "-w", "endpoint-serve", "--db", db_path).returncode == 0
    rep = cli("report", "--db", db_path, "-o", str(tmp_path / "r.html"))
    assert rep.returncode == 0 and "via genai-perf" in (tmp_path / "r.html").read_text()


def test_guidellm_tpot_includes_the_first_token(cli, db_path):
    out = cli("import", str(FIX / "guidellm_benchmarks.json"), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0 and "imported 2 result(s) of guidellm" in out.stdout, out.stderr
    # guidellm's TPOT (1310 / 128 = 10.23 ms) has the first token in it: kept apart, never stored as TPOT
    assert "not gpuarena's definition: tpot_ms mean 10.23 (the tool's): guidellm's TPOT" in out.stdout
    sync, const = sorted(Store(db_path).results(), key=lambda r: r.params["rate"] != "inf")
    assert sync.extra.ttft_ms.p50 == 40 and sync.extra.tpot_ms is None and sync.extra.completed == 20
    assert const.params["rate"] == "4" and const.extra.output_tokens_per_s == 499
    assert sync.params["model"] == "meta-llama/Llama-3.1-8B-Instruct"


def test_summary_lengths_and_one_result_per_gpu(cli, db_path):
    f = str(FIX / "sglang_bench_serving.jsonl")
    assert cli("import", f, "--gpu", "H200", "--db", db_path).returncode == 0
    out = cli("import", f, "--gpu", "H100 80GB SXM5", "--db", db_path)
    assert out.returncode == 0 and "imported 2 result(s)" in out.stdout, out.stderr     # another GPU: new results
    rs = Store(db_path).results()
    assert len(rs) == 4 and {(r.params["prompt_len"], r.params["output_len"]) for r in rs} == {(256, 6)}
    for name, lens in (("profile_export_genai_perf.json", (512, 128)), ("guidellm_benchmarks.json", (256, 128)),
                       ("llama-3-8b_550_11_summary.json", (550, 11))):
        assert cli("import", str(FIX / name), "--db", db_path).returncode == 0
        r = max(Store(db_path).results(), key=lambda r: r.id)
        assert (r.params["prompt_len"], r.params["output_len"]) == lens, name
