"""Decisions from served endpoints: $ per million tokens at the SLO, like-for-like comparison across
GPUs whatever the server's address, engines side by side, the report's section.  Results are written
through the Store API (stored results, not measurements); their figures are metrics.summarize's."""

from __future__ import annotations

import pytest

from gpuarena.analysis.verbs import compare as CMP
from gpuarena.analysis.verbs import cost as C
from gpuarena.analysis.verbs import endpoints as EP
from gpuarena.measure.stats import summarize
from gpuarena.report.build import gather
from gpuarena.report.markdown import render as render_markdown
from gpuarena.report.text import cost as cost_text, endpoints as endpoints_text
from gpuarena.store.db import Store
from gpuarena.workloads import registry
from gpuarena.workloads.endpoint import metrics as M

H200, H100 = "NVIDIA H200", "NVIDIA H100 80GB HBM3"


def served(device: str, engine: str, url: str, ttft: float, tpot: float, windows: list[float]) -> dict:
    """A stored endpoint-serve result: 10 requests of 100 tokens per pass, every figure from its records."""
    params = registry.get("endpoint-serve").resolve_params({"base_url": url, "model": "llama", "num_requests": 10})
    recs = [M.Record(sent=0, ok=True, ttft=ttft, e2e=ttft + 99 * tpot, gaps=[tpot] * 99, output_tokens=100,
                     prompt_tokens=512, tokens_from="usage") for _ in range(10)]
    extra = {"engine": engine, "model": "llama", "server_gpus": 1, "rate_requests_per_s": None,
             **M.summarize(recs, sum(windows) / len(windows), params["slo_ttft_ms"], params["slo_tpot_ms"])}
    thr = [1000 / w for w in windows]
    t = summarize(thr, "tokens/s")
    return {"case_key": f"endpoint-serve|{device}|{engine}", "source": "measured", "workload": "endpoint-serve",
            "workload_version": 1, "code_hash": "abc123", "variant": "seed", "params": params, "size": "full",
            "gpus": 1,
            "device": "cuda", "device_name": device, "status": "ok", "unit": "tokens/s", "precision": "n/a",
            "throughput_median": t.median, "throughput": t.to_dict(), "samples": windows, "items_per_step": 1000,
            "latency": summarize(windows, "s/step").to_dict(), "warnings": [], "extra": extra,
            "energy_j_per_item": 0.5, "power_w_mean": 500.0}


@pytest.fixture
def store(tmp_path):
    s = Store(str(tmp_path / "e.db"))
    s.add_result(served(H200, "vllm 0.11.0", "http://h200-box:8000", 0.2, 0.010, [1.00, 1.01, 0.99]))
    s.add_result(served(H100, "vllm 0.11.0", "http://10.0.0.7:8000", 0.3, 0.020, [2.00, 2.02, 1.98]))
    s.add_result(served(H100, "sglang 0.5.2", "http://10.0.0.8:30000", 0.3, 0.070, [1.50, 1.51, 1.49]))
    yield s
    s.close()


def test_dollars_per_million_tokens_by_hand():
    assert C.usd_per_million_tokens(3.5, 1000, gpus=2) == pytest.approx(2 * 3.5 / 3.6e6 * 1e6)
    assert C.usd_per_million_tokens(None, 1000) is None and C.usd_per_million_tokens(3.5, 0) is None


def test_cost_at_the_slo(store):
    rows = {(r.gpu, r.engine): r for r in C.cost_table(store, "endpoint-serve").rows}
    h200 = rows[("NVIDIA H200 SXM 141GB", "vllm 0.11.0")]
    # 1000 tokens in 1 s, all within the SLO (TTFT 200 ms, TPOT 10 ms): price / 3600 s per million
    price = C.catalog.match("H200").cloud.usd
    assert h200.usd_per_million_tokens_at_slo == pytest.approx(price / (1000 * 3600) * 1e6)
    # SGLang's TPOT of 70 ms misses the 50 ms SLO: no token counts, no price
    assert rows[("NVIDIA H100 80GB SXM5", "sglang 0.5.2")].usd_per_million_tokens_at_slo is None
    text = cost_text.render(C.cost_table(store, "endpoint-serve"), "md")
    assert "cloud $/M tokens at SLO" in text and "endpoint-serve's goodput" in text


def test_compare_is_like_for_like_across_addresses_and_engines(store):
    out = CMP.compare(store, "H100", "endpoint-serve")
    (row,) = out.rows
    assert row.engine == "vllm 0.11.0" and row.ratio == pytest.approx(2.0, rel=0.02)
    assert any("different engines (vllm 0.11.0 against sglang 0.5.2)" in s.reason for s in out.skipped)


def own_loop(device: str, batch: int, prompt: int = 512, variant: str = "compile+fused-proj") -> dict:
    """A stored llm-serve result (gpuarena's own decode loop) at batch `batch`, 128 new tokens."""
    params = registry.get("llm-serve").resolve_params({"shape": "llama-1b", "batch_size": batch, "prompt_len": prompt})
    windows = [0.50, 0.51, 0.49]
    t = summarize([batch * 128 / w for w in windows], "tokens/s")
    return {"case_key": f"llm-serve|{device}|{batch}|{prompt}", "source": "measured", "workload": "llm-serve",
            "workload_version": 2, "code_hash": "abc123", "variant": variant, "params": params, "size": "full",
            "gpus": 1, "device": "cuda", "device_name": device, "status": "ok", "unit": "tokens/s",
            "precision": "bf16", "throughput_median": t.median, "throughput": t.to_dict(), "samples": windows,
            "items_per_step": batch * 128, "latency": summarize(windows, "s/step").to_dict(), "warnings": [],
            "extra": {"ttft_s": 0.012, "tpot_ms_median": 3.8, "tpot_ms_p99": 4.1, "batch": batch},
            "energy_j_per_item": 0.2}


def test_engines_side_by_side_and_in_the_report(store):
    rows, own = EP.table(store)
    assert own == []
    assert [(r.gpu, r.engine) for r in rows] == [("NVIDIA H200 SXM 141GB", "vllm 0.11.0"),
                                                 ("NVIDIA H100 80GB SXM5", "vllm 0.11.0"),
                                                 ("NVIDIA H100 80GB SXM5", "sglang 0.5.2")]
    assert len({r.setting for r in rows}) == 1 and "512 in / 128 out" in rows[0].setting
    assert rows[0].tpot_ms_p99 == pytest.approx(10) and rows[2].slo_attainment == 0
    assert "Served engines, like for like" in endpoints_text.render(rows, "md")
    md = render_markdown(gather(store))
    assert "Served engines: throughput, latency and goodput at an SLO" in md and "sglang 0.5.2" in md


def test_engines_and_cost_commands(store, cli, tmp_path):
    db = store.path
    out = cli("engines", "--db", db, "-f", "md")
    assert out.returncode == 0 and "| sglang 0.5.2 |" in out.stdout, out.stderr
    out = cli("cost", "-w", "endpoint-serve", "--db", db)
    assert out.returncode == 0 and "cloud $/M tokens at SLO" in out.stdout, out.stderr
    empty = str(tmp_path / "empty.db")
    Store(empty).close()
    out = cli("engines", "--db", empty)
    assert out.returncode == 2 and "no ok endpoint-serve results" in out.stderr


def test_own_loop_beside_the_served_engines_at_the_same_lengths(store, cli):
    store.add_result(own_loop(H200, 1))
    store.add_result(own_loop(H200, 32))
    store.add_result(own_loop(H200, 1, prompt=1024))         # other lengths than any served result: not shown
    store.add_result(own_loop(H100 + " PCIe", 1))            # a GPU no served result ran on: not shown
    rows, own = EP.table(store)
    assert [(x.gpu, x.batch, x.lengths) for x in own] == [("NVIDIA H200 SXM 141GB", 1, "512 in / 128 out"),
                                                          ("NVIDIA H200 SXM 141GB", 32, "512 in / 128 out")]
    b32 = own[1]
    assert b32.engine == "gpuarena llm-serve compile+fused-proj" and b32.shape == "llama-1b"
    assert b32.output_tokens_per_s == pytest.approx(32 * 128 / 0.50) and b32.ttft_ms == pytest.approx(12)
    assert b32.tpot_ms_p50 == 3.8 and b32.joules_per_token == 0.2
    text = endpoints_text.render(rows, "md", own)
    assert endpoints_text.OWN_TITLE in text and "| gpuarena llm-serve compile+fused-proj | llama-1b | 32 |" in text
    md = render_markdown(gather(store))
    assert endpoints_text.OWN_TITLE in md
    out = cli("engines", "--db", store.path, "-f", "json")
    assert out.returncode == 0 and '"own_loop"' in out.stdout and '"batch": 32' in out.stdout, out.stderr


def test_engines_markdown_carries_no_html_or_link_from_a_server(store, cli):
    """An engine name is what a server said: in `engines -f md` it is text, never HTML or a link."""
    store.add_result(served(H200, "<img src=x onerror=alert(1)>[go](http://evil.example)", "http://b:8000",
                            0.2, 0.010, [1.00, 1.01, 0.99]))
    out = cli("engines", "--db", store.path, "-f", "md")
    assert out.returncode == 0, out.stderr
    assert "<img" not in out.stdout and "](" not in out.stdout
    assert "&lt;img src=x onerror=alert(1)&gt;[go]\\(http://evil.example)" in out.stdout
