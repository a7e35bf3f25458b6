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
