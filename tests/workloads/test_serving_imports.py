"""Other serving tools' result files: recognised by content, figures recomputed from their
per-request records, the tool's summary kept beside with the reason for each difference, and the
result in engines, cost and the report like a measured one.  Every fixture is written from the
tool's own writer code (fixtures/README.md names the files and commits read), each summary
computed the way that tool computes it, so where gpuarena's figure differs the reason is the
definition, not the data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpuarena.store.db import Store

FIX = Path(__file__).parent / "fixtures"
VLLM = FIX / "vllm_bench_serve.json"
VLLM_OLD = FIX / "vllm_benchmark_serving.json"


def _one(db_path, tool=None):
    rs = Store(db_path).results()
    if tool:
        rs = [r for r in rs if r.extra.imported_from["tool"] == tool]
    (r,) = rs
    return r


def test_vllm_detailed_file_recomputes_to_vllms_own_figures(cli, db_path):
    out = cli("import", str(VLLM), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0, out.stderr
    assert "imported 1 result(s) of vllm bench serve" in out.stdout and "per-request records" in out.stdout
    # gpuarena's definitions are vLLM's and the file keeps latencies and start times: nothing differs
    assert "differs" not in out.stdout
    r = _one(db_path)
    e, tool = r.extra, r.extra.tool_summary
    assert r.workload == "endpoint-serve" and r.source == "imported" and r.device_name == "H200"
    assert (e.completed, e.failed, e.errors) == (3, 1, {"stream_cut": 1})
    assert e.ttft_ms.mean == pytest.approx(tool["mean_ttft_ms"]) and e.ttft_ms.p99 == pytest.approx(tool["p99_ttft_ms"])
    assert e.tpot_ms.mean == pytest.approx(tool["mean_tpot_ms"])
    assert e.itl_ms.p50 == pytest.approx(tool["median_itl_ms"])
    assert e.output_tokens_per_s == pytest.approx(tool["output_throughput"])
    # requests' send times come from start_times: the third waited for a slot of --max-concurrency 2
    assert [round(x["sent"], 4) for x in e.request_records] == [0.0, 0.0, 0.1955, 0.2125]
    assert r.params["prompt_len"] == 512 and r.params["output_len"] == 8 and r.params["concurrency"] == 2
    again = cli("import", str(VLLM), "--gpu", "H200", "--db", db_path)
    assert again.returncode == 0 and "1 already present" in again.stdout and len(Store(db_path).results()) == 1


def test_older_benchmark_serving_file_without_latencies(cli, db_path):
    """benchmark_serving.py kept no latencies: E2E is rebuilt from the chunks, and vLLM's own
    latency (which also counts the stream's close) reads higher; the difference says so."""
    out = cli("import", str(VLLM_OLD), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0, out.stderr
    assert "tpot_ms mean: recomputed 20, the tool's 20.71; TPOT = (E2E - TTFT) / (tokens - 1) in both" in out.stdout
    assert "e2e_ms mean: recomputed 200, the tool's 205; the same definition; E2E here is TTFT + the chunk gaps" \
        in out.stdout
    assert "ttft_ms" not in out.stdout and "output_tokens_per_s" not in out.stdout   # these agree
    e = _one(db_path).extra
    assert e.tool_summary["request_goodput:"] is None      # the older file's own key, kept as written
    assert e.tpot_ms.mean == pytest.approx(20) and e.output_tokens_per_s == pytest.approx(48)
    assert e.tool_differences and all(w in _one(db_path).warnings for w in e.tool_differences)


def test_summary_only_and_appended_runs(cli, db_path, tmp_path):
    d = json.loads(VLLM.read_text())
    for k in ("input_lens", "output_lens", "ttfts", "itls", "start_times", "generated_texts", "errors"):
        d.pop(k)                          # saved without --save-detailed (latencies stay in current vLLM)
    f = tmp_path / "summary.json"
    f.write_text(json.dumps(d))
    out = cli("import", str(f), "--db", db_path)
    assert out.returncode == 0 and "the tool's own summary" in out.stdout, out.stderr
    assert "note: the file keeps per-request latencies but no TTFTs" in out.stdout
    r = _one(db_path)
    assert r.extra.tpot_ms.mean == pytest.approx(d["mean_tpot_ms"]) and r.extra.failed == 1
    # --append-result: one JSON object a line, one result each
    runs = tmp_path / "appended.json"
    runs.write_text(json.dumps(d) + "\n" + json.dumps({**d, "request_rate": 8.0}))
    out = cli("import", str(runs), "--db", db_path)
    assert out.returncode == 0 and "imported 1 result(s) of vllm bench serve" in out.stdout, out.stderr
    assert "1 already present" in out.stdout                     # its first run is the summary imported above
    assert sorted(r.params["rate"] for r in Store(db_path).results()) == ["8", "inf"]


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


def test_llmperf_inter_token_latency_is_not_tpot(cli, db_path, tmp_path):
    out = cli("import", str(FIX / "llama-3-8b_550_11_summary.json"), "--db", db_path)
    assert out.returncode == 0, out.stderr
    e = _one(db_path).extra
    # 1.5 s for 11 tokens after a 0.5 s first token: TPOT (1.5 - 0.5) / 10 = 100 ms; LLMPerf says 1.5 / 11
    assert e.tpot_ms.mean == pytest.approx(100) and (e.completed, e.failed) == (3, 1)
    assert any(x.startswith("tpot_ms mean: recomputed 100, the tool's 136.4; LLMPerf's inter-token latency is a "
                            "request's whole time, first token included") for x in e.tool_differences)
    assert e.ttft_ms.mean == pytest.approx(500) and e.tool_summary["results_num_completed_requests_per_min"] == 36
    assert e.errors == {"http_5xx": 1} and e.duration_s == pytest.approx(5)      # the launch loop's time
    assert any("launch-loop time" in n for n in e.tool_notes)
    # the individual responses beside the summary are the same run
    again = cli("import", str(FIX / "llama-3-8b_550_11_individual_responses.json"), "--db", db_path)
    assert again.returncode == 0 and "1 already present" in again.stdout, again.stderr
    # on their own, with the start times the launch loop writes: the duration is theirs
    rows = json.loads((FIX / "llama-3-8b_550_11_individual_responses.json").read_text())
    for i, x in enumerate(rows):
        x["start_time"] = 0.25 * i
    alone = tmp_path / "run_individual_responses.json"
    alone.write_text(json.dumps(rows))
    out = cli("import", str(alone), "--db", db_path)
    assert out.returncode == 0 and "no summary of the tool's beside them" in out.stdout, out.stderr
    r = max(Store(db_path).results(), key=lambda r: r.id)
    assert r.extra.duration_s == pytest.approx(0.5 + 1.5) and r.extra.completed == 3
    # without start times and without a summary there is no duration to make rates of: refused, saying so
    for x in rows:
        x.pop("start_time")
    alone.write_text(json.dumps(rows))
    out = cli("import", str(alone), "--db", db_path)
    assert out.returncode == 2 and "without start_time give no run duration" in out.stderr


def test_aiperf_records_recomputed_beside_its_summary(cli, db_path, tmp_path):
    out = cli("import", str(FIX / "profile_export.jsonl"), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0 and "of aiperf" in out.stdout and "per-request records" in out.stdout, out.stderr
    # AIPerf's duration runs to the last response (the usage chunk 12 ms after the last token)
    assert "output_tokens_per_s: recomputed 73.57, the tool's 71.24; output tokens over the run's duration; " \
           "AIPerf's duration runs from the first request sent to the last response received" in out.stdout
    assert "ttft_ms" not in out.stdout and "tpot_ms" not in out.stdout and "itl_ms" not in out.stdout
    r = _one(db_path)
    e, s = r.extra, json.loads((FIX / "profile_export_aiperf.json").read_text())
    assert e.ttft_ms.mean == pytest.approx(s["time_to_first_token"]["avg"])
    # AIPerf's inter-token latency is gpuarena's TPOT (9 tokens in 8 chunks); its inter-chunk latency our ITL
    assert e.tpot_ms.mean == pytest.approx(s["inter_token_latency"]["avg"])
    assert e.itl_ms.mean == pytest.approx(s["inter_chunk_latency"]["avg"]) and e.itl_ms.mean != e.tpot_ms.mean
    assert (e.completed, e.failed, e.errors) == (3, 1, {"http_5xx": 1})
    assert r.params["model"] == "Qwen/Qwen3-8B" and r.params["concurrency"] == 2 and r.params["output_len"] == 9
    # the records alone: recomputed, nothing of AIPerf's to compare
    lone = tmp_path / "run1"
    lone.mkdir()
    shutil.copy(FIX / "profile_export.jsonl", lone / "profile_export.jsonl")
    out = cli("import", str(lone / "profile_export.jsonl"), "--db", db_path)
    assert out.returncode == 0 and "note: no profile_export_aiperf.json beside the records" in out.stdout


def test_aiperf_summaries_both_layouts(cli, db_path):
    out = cli("import", str(FIX / "profile_export_aiperf.json"), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0 and "of aiperf" in out.stdout and "the tool's own summary" in out.stdout, out.stderr
    r = _one(db_path)
    assert r.extra.ttft_ms.p50 == pytest.approx(100) and r.extra.output_tokens_per_s == pytest.approx(71.24, rel=1e-3)
    assert r.params["concurrency"] == 2 and r.extra.tool_summary["aiperf_version"] == "0.14.0"
    # the first releases: metrics under "records" by tag, TTFT tagged "ttft"
    out = cli("import", str(FIX / "aiperf_early_profile_export_aiperf.json"), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0 and "of aiperf" in out.stdout, out.stderr
    a = max(Store(db_path).results(), key=lambda r: r.id)
    assert a.extra.ttft_ms.p50 == 15.34 and a.extra.tpot_ms.mean == 4.9 and a.params["concurrency"] == 8


def test_genai_perf_export_counts_chunks_where_genai_perf_tokenizes(cli, db_path):
    out = cli("import", str(FIX / "profile_export.json"), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0 and "of genai-perf" in out.stdout and "per-request records" in out.stdout, out.stderr
    # 6 text chunks a request; GenAI-Perf's tokenizer counted 7 tokens: its TPOT and tokens/s differ, and say why
    assert "tpot_ms mean: recomputed 11, the tool's 9.167" in out.stdout
    assert "GenAI-Perf counts output tokens by tokenizing the text" in out.stdout
    assert "ttft_ms" not in out.stdout and "e2e_ms" not in out.stdout       # the same definitions
    r = _one(db_path)
    s = json.loads((FIX / "profile_export_genai_perf.json").read_text())
    assert r.extra.ttft_ms.mean == pytest.approx(s["time_to_first_token"]["avg"])
    assert r.extra.e2e_ms.p99 == pytest.approx(s["request_latency"]["p99"])
    assert r.extra.tokens_from == ["counted"] and r.extra.completed == 3
    assert r.extra.itl_ms.mean == pytest.approx(11, rel=1e-4)
    assert r.params["concurrency"] == 2 and r.params["model"] == "meta-llama/Meta-Llama-3-8B-Instruct"


def test_genai_perf_and_mlperf_summaries(cli, db_path):
    out = cli("import", str(FIX / "profile_export_genai_perf.json"), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0 and "genai-perf" in out.stdout, out.stderr
    out = cli("import", str(FIX / "mlperf_log_summary.txt"), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0 and "mlperf loadgen" in out.stdout, out.stderr
    assert "not gpuarena's definition: tpot_ms mean 21.96 (the tool's)" in out.stdout
    g, m = sorted(Store(db_path).results(), key=lambda r: r.extra.imported_from["tool"])
    # GenAI-Perf's inter-token latency is (latency - TTFT) / (tokens - 1): stored as gpuarena's TPOT
    assert g.extra.tpot_ms.mean == pytest.approx(55 / 6) and g.extra.ttft_ms.mean == pytest.approx(85)
    assert g.params["concurrency"] == 2 and g.params["model"] == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert m.extra.ttft_ms.mean == pytest.approx(503.858725) and m.extra.output_tokens_per_s == 1234.5
    assert m.extra.tpot_ms is None and m.params["rate"] == "12.5"
    assert m.extra.engine == "MLPerf loadgen Server scenario (via mlperf loadgen)"


def test_guidellm_records_and_definitions(cli, db_path):
    out = cli("import", str(FIX / "guidellm_benchmarks.json"), "--gpu", "H200", "--db", db_path)
    assert out.returncode == 0 and "imported 2 result(s) of guidellm" in out.stdout, out.stderr
    # guidellm's TPOT has the first token in it; its latency runs to the end of the response
    assert "tpot_ms mean: recomputed 4.961, the tool's 5.234; guidellm's TPOT is (last token - request start) / " \
           "tokens: the first token included" in out.stdout
    assert "e2e_ms mean: recomputed 670, the tool's 682; guidellm's request latency runs to the end" in out.stdout
    sync, const = sorted(Store(db_path).results(), key=lambda r: r.params["rate"] != "inf")
    assert sync.extra.ttft_ms.p50 == pytest.approx(40) and sync.extra.itl_ms is None
    assert (sync.extra.completed, sync.extra.failed) == (3, 1) and sync.extra.errors == {"http_5xx": 1}
    assert sync.params["model"] == "meta-llama/Llama-3.1-8B-Instruct" and sync.params["output_len"] == 128
    # --sample-requests kept 2 of 20: latencies from the sample, throughputs guidellm's (its measured window)
    assert const.params["rate"] == "4" and const.extra.completed == 20
    assert const.extra.output_tokens_per_s == pytest.approx(const.extra.tool_summary["output_tokens_per_second_mean"])
    assert any("keeps 2 of 20 successful requests" in n for n in const.extra.tool_notes)
    assert const.extra.tpot_ms.mean == pytest.approx(11)


def test_guidellm_03_request_layout(cli, db_path, tmp_path):
    """guidellm 0.3 kept a request's times on the request (start_time, first_token_time ...), not in
    info.timings; both read the same."""
    def to_03(d):
        for b in d["benchmarks"]:
            b["args"] = {"strategy": b.pop("config")["strategy"]}
            b["worker"] = {"backend_model": "meta-llama/Llama-3.1-8B-Instruct"}
            for rows in (b["requests"]["successful"], b["requests"]["errored"]):
                for r in rows:
                    t = r.pop("info")["timings"]
                    r.update(start_time=t["request_start"], end_time=t["request_end"],
                             first_token_time=t["first_token_iteration"], last_token_time=t["last_token_iteration"])
                    for k in ("input_metrics", "output_metrics", "request_start_time", "request_end_time"):
                        r.pop(k)
    f = _mutate_json("guidellm_benchmarks.json", to_03, tmp_path)
    out = cli("import", str(f), "--db", db_path)
    assert out.returncode == 0 and "imported 2 result(s) of guidellm" in out.stdout, out.stderr
    sync = min(Store(db_path).results(), key=lambda r: r.params["rate"] != "inf")
    assert sync.extra.ttft_ms.p50 == pytest.approx(40) and sync.extra.tpot_ms.mean == pytest.approx(4.961, rel=1e-3)
    assert sync.params["model"] == "meta-llama/Llama-3.1-8B-Instruct" and sync.extra.failed == 1


def _mutate_json(src, fn, tmp_path, name=None):
    d = json.loads((FIX / src).read_text())
    fn(d)
    f = tmp_path / (name or src)
    f.write_text(json.dumps(d))
    return f


def test_malformed_files_are_one_line_naming_the_file_and_exit_2(cli, db_path, tmp_path):
    def bad_guidellm_timing(d):
        t = d["benchmarks"][0]["requests"]["successful"][0]
        t["info"]["timings"] = {}
        t.pop("request_start_time")

    files = {
        "short_itls": _mutate_json("vllm_bench_serve.json", lambda d: d.update(itls=d["itls"][:2]), tmp_path, "a.json"),
        "text_ttft": _mutate_json("vllm_bench_serve.json", lambda d: d["ttfts"].__setitem__(0, "x"), tmp_path,
                                  "b.json"),
        "bad_duration": _mutate_json("vllm_benchmark_serving.json", lambda d: d.update(duration=-1), tmp_path,
                                     "c.json"),
        "aiperf_summary": _mutate_json("profile_export_aiperf.json",
                                       lambda d: d["time_to_first_token"].update(avg="fast"), tmp_path, "d.json"),
        "pa_lengths": _mutate_json("profile_export.json", lambda d: d["experiments"][0]["requests"][0][
            "response_timestamps"].pop(), tmp_path, "e.json"),
        "pa_chunk": _mutate_json("profile_export.json", lambda d: d["experiments"][0]["requests"][1][
            "response_outputs"][2].update(response="data: {not json"), tmp_path, "f.json"),
        "guidellm_timing": _mutate_json("guidellm_benchmarks.json", bad_guidellm_timing, tmp_path, "g.json"),
        "guidellm_metric": _mutate_json("guidellm_benchmarks.json", lambda d: d["benchmarks"][1]["metrics"][
            "time_to_first_token_ms"]["successful"].update(mean="x"), tmp_path, "h.json"),
        "p99_below_p50": _mutate_json("profile_export_aiperf.json", lambda d: d["time_to_first_token"].update(
            p99=d["time_to_first_token"]["p50"] / 2), tmp_path, "o.json"),
        "negative_rate": _mutate_json("profile_export_aiperf.json", lambda d: d["request_throughput"].update(
            avg=-3.0), tmp_path, "p.json"),
        "unknown": tmp_path / "i.json", "text": tmp_path / "j.json", "mlperf": tmp_path / "k.txt",
        "sglang_line": tmp_path / "l.jsonl", "aiperf_value": tmp_path / "m.jsonl", "aiperf_line": tmp_path / "n.jsonl",
        "llmperf_response": tmp_path / "x_summary.json",
    }
    files["unknown"].write_text(json.dumps({"hello": 1}))
    files["text"].write_text("not json")
    files["mlperf"].write_text("MLPerf Results Summary\nSUT name : x\nScenario : Server\n")
    sg = (FIX / "sglang_bench_serving.jsonl").read_text().splitlines()
    files["sglang_line"].write_text(sg[0] + "\n" + sg[1][:50] + "\n")
    recs = (FIX / "profile_export.jsonl").read_text().splitlines()
    files["aiperf_value"].write_text(recs[0].replace('"request_latency": {"value": ', '"request_latency": {"value": "a'
                                                     '", "x": ') + "\n")
    files["aiperf_line"].write_text(recs[0] + "\n{\n")
    shutil.copy(FIX / "llama-3-8b_550_11_summary.json", files["llmperf_response"])
    rows = json.loads((FIX / "llama-3-8b_550_11_individual_responses.json").read_text())
    rows[0].pop("ttft_s")
    (tmp_path / "x_individual_responses.json").write_text(json.dumps(rows))
    for case, f in files.items():
        out = cli("import", str(f), "--db", db_path)
        lines = out.stderr.strip().splitlines()
        named = "x_individual_responses.json" if case == "llmperf_response" else f.name   # the bad one of the two
        assert out.returncode == 2 and len(lines) == 1 and named in lines[0], (case, out.stderr, out.stdout)
        assert "Traceback" not in out.stderr
    assert not Path(db_path).exists() or Store(db_path).results() == []


def test_imported_results_in_engines_cost_and_report(cli, db_path, tmp_path):
    for f in ("vllm_bench_serve.json", "profile_export_genai_perf.json", "mlperf_log_summary.txt",
              "guidellm_benchmarks.json"):
        assert cli("import", str(FIX / f), "--gpu", "H200", "--db", db_path).returncode == 0
    eng = cli("engines", "--db", db_path, "-f", "json")
    engines = {r["engine"] for r in json.loads(eng.stdout)["rows"]}
    assert eng.returncode == 0 and {"openai (via vllm bench serve)", "openai-compatible server (via genai-perf)",
                                    "MLPerf loadgen Server scenario (via mlperf loadgen)"} <= engines
    assert cli("cost", "-w", "endpoint-serve", "--db", db_path).returncode == 0
    rep = cli("report", "--db", db_path, "-o", str(tmp_path / "r.html"))
    assert rep.returncode == 0 and "via genai-perf" in (tmp_path / "r.html").read_text()


def test_summary_lengths_and_one_result_per_gpu(cli, db_path):
    f = str(FIX / "sglang_bench_serving.jsonl")
    assert cli("import", f, "--gpu", "H200", "--db", db_path).returncode == 0
    out = cli("import", f, "--gpu", "H100 80GB SXM5", "--db", db_path)
    assert out.returncode == 0 and "imported 2 result(s)" in out.stdout, out.stderr     # another GPU: new results
    rs = Store(db_path).results()
    assert len(rs) == 4 and {(r.params["prompt_len"], r.params["output_len"]) for r in rs} == {(256, 6)}
    for name, lens in (("profile_export_genai_perf.json", (7, 7)), ("profile_export_aiperf.json", (550, 9)),
                       ("llama-3-8b_550_11_summary.json", (550, 11))):
        assert cli("import", str(FIX / name), "--db", db_path).returncode == 0
        r = max(Store(db_path).results(), key=lambda r: r.id)
        assert (r.params["prompt_len"], r.params["output_len"]) == lens, name
