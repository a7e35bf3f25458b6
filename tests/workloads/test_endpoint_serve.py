"""endpoint-serve against real servers: `gpuarena serve-tiny` (the project's decoder behind the
OpenAI API) through the real runner and database, and a server that misbehaves on purpose."""

from __future__ import annotations

import json
import os
import socket
import time

import pytest

from gpuarena.errors import UserError
from gpuarena.store.db import Store
from gpuarena.workloads import registry
from gpuarena.workloads.endpoint import client, load
from gpuarena.workloads.endpoint import metrics as M
from tests.workloads import endpoint_faults, tiny_proc
from tests.workloads.tiny_proc import in_process
from tests.workloads.conftest import assert_ok, run_entries

KEY_ENV, KEY = "GPUARENA_TEST_ENDPOINT_KEY", "test-key-7d1f0c"


@pytest.fixture(scope="module")
def tiny_url():
    """`gpuarena serve-tiny` on a free port, requiring an API key; its base URL."""
    with tiny_proc.serving(["--api-key-env", KEY_ENV], {KEY_ENV: KEY}) as url:
        yield url


@pytest.fixture(scope="module")
def faults():
    return f"http://127.0.0.1:{endpoint_faults.start()}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cli_run_against_the_tiny_server(tiny_url, cli, db_path):
    out = cli("run", "-w", "endpoint-serve", "--set", f"base_url={tiny_url}", "--set", f"api_key_env={KEY_ENV}",
              "--set", "num_requests=6", "--set", "concurrency=3", "--repeats", "2", "--db", db_path,
              env={KEY_ENV: KEY})
    assert out.returncode == 0, out.stderr[-2000:]
    (r,) = Store(db_path).results()
    assert_ok(r)
    e = r.extra
    assert r.unit == "tokens/s" and r.items_per_step == 6 * 8
    assert e.engine.startswith("gpuarena serve-tiny") and e.model == "tiny-llama"
    assert e.requests == e.completed == 12 and e.errors == {} and e.tokens_from == ["usage"]
    recs = [M.Record(**x) for x in e.request_records]
    for x in recs:   # the server's usage: one token per prompt word, max_tokens generated
        assert (x.prompt_tokens, x.output_tokens, len(x.gaps)) == (16, 8, 7)
        assert 0 < x.ttft <= x.e2e and x.e2e == pytest.approx(x.ttft + sum(x.gaps))
    # the stored figures are the records' arithmetic
    assert e.output_tokens == 96 and e.prompt_tokens == 192
    assert e.output_tokens_per_s == pytest.approx(96 / e.duration_s)
    good = [x for x in recs if x.meets(e.slo_ttft_ms, e.slo_tpot_ms)]
    assert e.goodput_requests_per_s == pytest.approx(len(good) / e.duration_s)
    assert e.ttft_ms.p50 == pytest.approx(M.percentile([x.ttft for x in recs], 50) * 1e3)
    assert e.ttft_ms.p50 <= e.ttft_ms.p90 <= e.ttft_ms.p99
    # the engine is part of the environment fingerprint; the key itself is stored nowhere
    env = Store(db_path).conn.execute("select fingerprint from environments").fetchone()[0]
    assert json.loads(env)["servers"][0]["engine"] == e.engine
    with open(db_path, "rb") as f:
        assert KEY.encode() not in f.read()


def test_chat_prompts_file_and_poisson_through_the_runner(tiny_url, db_path, tmp_path):
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"prompt": "one two three", "max_tokens": 4}\n\n'
                       '{"messages": [{"role": "user", "content": "four five"}]}\n')
    (chat,) = run_entries(db_path, [{"workload": "endpoint-serve", "params": {
        "base_url": tiny_url, "api_key_env": KEY_ENV, "api": "chat", "prompts_file": str(prompts), "rate": 40}}],
        repeats=1, env={KEY_ENV: KEY})
    assert_ok(chat)
    recs = chat.extra.request_records
    # the file's two prompts in turn: 3 words with max_tokens 4, then 2 words with output_len 8
    assert [(x["prompt_tokens"], x["output_tokens"]) for x in recs[:2]] == [(3, 4), (2, 8)]
    assert chat.extra.api == "chat" and chat.extra.rate_requests_per_s == 40
    assert chat.items_per_step == 4 * 4 + 4 * 8
    assert [x["asked"] for x in recs[:2]] == [4, 8] and not [w for w in chat.warnings if "request" in w]


def test_sweep_finds_the_highest_rate_that_holds(tiny_url):
    key = {"base_url": tiny_url, "api_key_env": KEY_ENV}
    wl = in_process({**key, "rate": "sweep", "sweep_start": 4, "sweep_max": 16, "slo_ttft_ms": 1e8,
                     "slo_tpot_ms": 1e8}, env={KEY_ENV: KEY})
    assert [t["rate"] for t in wl.sweep["points"]] == [4, 8, 16] and wl.sweep["best_rate"] == wl.rate == 16
    assert all(t["slo_attainment"] == 1.0 and t["tpot_ms"]["p50"] > 0 for t in wl.sweep["points"])
    # no rate holds an SLO no server meets: every point is kept, the timed passes run at the lightest load tried
    # and the result says so (a server that cannot hold the SLO is a finding, not a failed benchmark)
    none = in_process({**key, "rate": "sweep", "sweep_start": 32, "slo_tpot_ms": 0.001}, env={KEY_ENV: KEY})
    pts = none.sweep["points"]
    assert pts[0]["rate"] == 32 and not any(t["holds"] for t in pts) and none.sweep["best_rate"] is None
    assert none.rate == min(t["rate"] for t in pts) < 32
    assert [w for w in none.check() if w.startswith("no rate held 90% of requests") and "TPOT 0.001 ms (rate 32: 0%"
            in w and "lightest load tried" in w]


def test_goodput_arithmetic_by_hand():
    def rec(ttft, e2e, n, ok=True, error=None):
        gaps = [(e2e - ttft) / (n - 1)] * (n - 1) if ok and n > 1 else []
        return M.Record(sent=0, ok=ok, ttft=ttft, e2e=e2e, output_tokens=n, gaps=gaps, error=error,
                        prompt_tokens=10 if ok else None)

    recs = [rec(0.1, 1.1, 11),          # TPOT 100 ms
            rec(0.3, 0.8, 11),          # TTFT 300 ms, TPOT 50 ms
            rec(0.2, 0.2, 1),           # one token: TPOT counts as 0 for goodput, absent from TPOT figures
            rec(None, None, 0, ok=False, error="http_5xx")]
    s = M.summarize(recs, duration_s=2.0, slo_ttft_ms=250, slo_tpot_ms=60)
    # only the one-token request meets both SLOs (TTFT 200 <= 250; TPOT 0 <= 60)
    assert s["goodput_requests_per_s"] == 0.5 and s["goodput_tokens_per_s"] == 0.5
    assert s["slo_attainment"] == 0.25 and s["errors"] == {"http_5xx": 1}
    assert (s["completed"], s["failed"], s["output_tokens"], s["prompt_tokens"]) == (3, 1, 23, 30)
    assert s["output_tokens_per_s"] == 11.5 and s["requests_per_s"] == 1.5
    assert s["tpot_ms"]["mean"] == pytest.approx(75) and s["tpot_ms"]["p50"] == pytest.approx(75)
    assert s["itl_ms"]["p50"] == pytest.approx(75)   # 10 gaps of 100 ms, 10 of 50 ms
    # E2E 200, 800, 1100 ms: p99 sits 0.98 of the way from the 2nd to the 3rd
    assert s["e2e_ms"]["p99"] == pytest.approx(800 + 0.98 * 300)
    assert M.percentile([1, 2, 3, 4], 50) == 2.5 and M.percentile([5], 99) == 5


def test_sweep_search_is_monotone():
    for edge in (0.3, 1.0, 3.7, 50.0, 1000.0):
        best, tried = M.search_rate(lambda r, edge=edge: r <= edge, start=1.0, limit=256.0, refine=6)
        if edge >= 256:
            assert best == 256
        elif edge < 1 / 8:
            assert best is None
        else:
            assert best <= edge and (edge - best) <= edge / 2 ** 6 + 1e-9
        assert all(ok == (r <= edge) for r, ok in tried)
    assert M.search_rate(lambda r: False, 1.0, 10.0, 3) == (None, [(1.0, False), (0.5, False), (0.25, False),
                                                                   (0.125, False)])


@pytest.mark.parametrize("mode,kind,detail", [
    ("fail500", "http_5xx", "HTTP 500: engine overloaded"),
    ("malformed", "malformed", "not JSON"),
    ("cut", "stream_cut", ""),
    ("hang", "timeout", "within 1 s"),
    ("errevent", "stream_error", "CUDA out of memory"),
    ("longline", "malformed", "event line longer than 1024 KiB"),
    ("endless500", "http_5xx", "HTTP 500"),                  # the body read to its cap, no further
    ("endlessline", "malformed", "event line longer than 1024 KiB"),
    ("redirect", "redirect", "HTTP 307 to http://elsewhere.invalid:9/v1/completions (not followed"),
    ("json", "malformed", "not a server-sent event stream (Content-Type application/json"),
])
def test_each_misbehaviour_is_a_counted_failure(faults, mode, kind, detail):
    body = client.payload("completions", endpoint_faults.MODEL, "hi", 3, True)
    # 1 s for the hang (the client gives up); a faulty answer gets as long as a loaded machine needs
    limit = 1.0 if mode == "hang" else 60.0
    recs, _ = load.run_pass(f"{faults}/{mode}/v1/completions", "completions", [body] * 2, client.headers(None),
                            float("inf"), 0, limit, 0)
    for r in recs:
        assert not r.ok and r.error == kind and detail in r.detail and r.ttft is None and r.gaps == []


def test_unreachable_server_and_a_stream_without_usage(faults):
    body = client.payload("completions", endpoint_faults.MODEL, "hi", 3, True)
    (down,), _ = load.run_pass(f"http://127.0.0.1:{free_port()}/v1/completions", "completions", [body],
                               client.headers(None), float("inf"), 0, 300.0, 0)
    assert down.error == "connect" and "127.0.0.1" in down.detail
    (r,), _ = load.run_pass(f"{faults}/nousage/v1/completions", "completions", [body], client.headers(None),
                            float("inf"), 0, 300.0, 0)
    assert r.ok and r.output_tokens == 3 and r.tokens_from == "counted" and r.prompt_tokens is None
    (r,), _ = load.run_pass(f"{faults}/badusage/v1/completions", "completions", [body], client.headers(None),
                            float("inf"), 0, 300.0, 0)      # usage {completion_tokens: true, prompt_tokens: -5}
    assert r.ok and r.output_tokens == 3 and r.tokens_from == "counted" and r.prompt_tokens is None


def test_failures_through_the_runner(faults, db_path):
    flaky, fail = run_entries(db_path, [
        {"workload": "endpoint-serve", "params": {"base_url": f"{faults}/flaky", "num_requests": 4}},
        {"workload": "endpoint-serve", "params": {"base_url": f"{faults}/fail500"}},
    ], repeats=2)
    assert_ok(flaky)
    assert flaky.extra.errors == {"http_5xx": 4} and flaky.extra.completed == 4
    assert any(w.startswith("4 of 8 requests failed: 4 http_5xx") for w in flaky.warnings)
    assert fail.status == "failed" and "warm-up" in fail.error
    assert "1 http_5xx (first: HTTP 500: engine overloaded)" in fail.error


def test_an_endless_probe_answer_is_read_to_its_cap(faults):
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    info = load.probe(f"{faults}/endlessprobe", {})
    assert info["reachable"] and "version" not in info and info["models"] == [endpoint_faults.MODEL]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 256 << 10     # KiB: under 256 MB


def test_a_servers_escape_codes_are_neither_stored_nor_shown(faults, db_path):
    """A control character in what the server says made the measured result unstorable (run exited 0)."""
    (r,) = run_entries(db_path, [{"workload": "endpoint-serve", "params": {"base_url": f"{faults}/escape",
                                                                          "num_requests": 2}}], repeats=1)
    assert_ok(r)
    assert r.extra.engine == "evil]0;x 1.0" and "\x1b" not in json.dumps(r.extra.model_dump(mode="json"))
    assert client._first_line("HTTP 500: \x1b[31mred\x07 alert") == "HTTP 500: [31mred alert"


def test_server_down_and_a_missing_key(tiny_url):
    with pytest.raises(RuntimeError, match=r"/v1/models \(no server answers there\); start the server or set model="):
        in_process({"base_url": f"http://127.0.0.1:{free_port()}"})
    with pytest.raises(RuntimeError, match="warm-up .* 1 connect"):
        in_process({"base_url": f"http://127.0.0.1:{free_port()}", "model": "m"})
    with pytest.raises(RuntimeError, match="1 http_4xx .*HTTP 401: a valid API key is required"):
        in_process({"base_url": tiny_url, "api_key_env": KEY_ENV}, env={KEY_ENV: "wrong"})


def test_bad_parameters_exit_2(cli, db_path, tmp_path):
    out = cli("run", "-w", "endpoint-serve", "--set", "rate=fast", "--db", db_path)
    assert out.returncode == 2 and "rate='fast'" in out.stderr and not os.path.exists(db_path)
    wl = registry.get("endpoint-serve")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "fine"}\n{"prompt": 3}\n')
    for given, words in [({"base_url": "ftp://host"}, "expected http://HOST:PORT"),
                         ({"api_key_env": "sk-live-123"}, "NAME of an environment variable"),
                         ({"rate": "-2"}, "positive number"),
                         ({"sweep_start": 8, "sweep_max": 2}, "below sweep_start")]:
        with pytest.raises(UserError, match=words):
            wl.resolve_params(given)
    os.mkfifo(tmp_path / "fifo")
    for path, words in [(tmp_path / "missing.jsonl", "no such file"), (bad, "line 2"),
                        (tmp_path / "fifo", "not a regular file"), ("/dev/zero", "not a regular file")]:
        with pytest.raises(UserError, match=words):
            wl.check_params(wl.resolve_params({"prompts_file": str(path)}))
    assert wl.resolve_params({"rate": "2.50", "base_url": "http://h:1/v1/"})["rate"] == "2.5"
    assert wl.resolve_params({"base_url": "http://h:1/v1/"})["base_url"] == "http://h:1"


def test_arrivals_concurrency_and_where_the_server_is(tiny_url):
    # Poisson gaps of mean 1/rate from a seeded generator (no clock involved)
    g = load.gaps(4000, 20.0, seed=3)
    assert g == load.gaps(4000, 20.0, seed=3) and sum(g) / len(g) == pytest.approx(1 / 20, rel=0.05)
    assert load.gaps(3, float("inf"), 0) == [0.0, 0.0, 0.0]
    # concurrency 1: each request is sent after the previous one ended
    bodies = [client.payload("completions", "tiny-llama", p, 4, True) for p in load.random_prompts(4, 5, 0)]
    recs, _ = load.run_pass(f"{tiny_url}/v1/completions", "completions", bodies, client.headers(KEY), float("inf"),
                            1, 300.0, 0)
    assert all(r.ok for r in recs)
    for a, b in zip(recs, recs[1:]):
        assert b.sent >= a.sent + a.e2e
    # energy per token is this GPU's only when the server runs here
    wl = registry.get("endpoint-serve")
    from gpuarena.workloads.endpoint.spec import is_local
    assert is_local(wl.resolve_params({"base_url": "http://localhost:8000"}))
    assert not is_local(wl.resolve_params({"base_url": "http://10.1.2.3:8000"}))
    assert is_local(wl.resolve_params({"base_url": "http://10.1.2.3:8000", "local": "yes"}))


def test_serve_tiny_answers_odd_clients_without_a_traceback(caplog):
    """A non-object stream_options, a deeply nested body and a client that hangs up mid-stream are
    ordinary client behaviour: an HTTP error or nothing, never a traceback in the server's log."""
    import http.client
    import logging

    from gpuarena.workloads.endpoint import tiny_server as T

    port = [endpoint_faults.serve_in_thread(lambda: T.make_app(T.TinyEngine("tiny")), "serve-tiny", 120)]
    caplog.set_level(logging.DEBUG)

    def post(body: bytes):
        conn = http.client.HTTPConnection("127.0.0.1", port[0], timeout=120)
        conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        return conn, conn.getresponse()

    ask = {"model": T.MODEL_NAME, "prompt": "hello there", "max_tokens": 4, "stream": True}
    for body in (json.dumps({**ask, "stream_options": [1]}).encode(),
                 json.dumps({**ask, "stream_options": "x"}).encode(), b"[" * 100_000 + b"]" * 100_000):
        conn, resp = post(body)
        assert resp.status == 400, resp.read()
        conn.close()
    conn, resp = post(json.dumps({**ask, "max_tokens": 64}).encode())
    resp.read(10)
    conn.sock.shutdown(socket.SHUT_RDWR)          # the client hangs up mid-stream
    conn.close()
    conn, resp = post(json.dumps({**ask, "stream_options": {"include_usage": True}}).encode())
    text = resp.read().decode()
    assert resp.status == 200 and text.rstrip().endswith("data: [DONE]") and '"usage"' in text
    time.sleep(0.5)                                # the hung-up stream's handler has run to its end
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR], caplog.text[-2000:]


def test_a_tls_failure_is_not_read_as_no_server(faults):
    """https:// to a plain-HTTP server: the handshake fails; the server is there."""
    info = load.probe(faults.replace("http://", "https://") + "/ok", {})
    assert not info["reachable"] and info["why"].startswith("TLS failed"), info


def test_serve_tiny_refuses_a_shape_that_cannot_fit(cli):
    import psutil

    from gpuarena.workloads.llm.flops import param_counts
    from gpuarena.workloads.llm.shapes import SHAPES

    if param_counts(SHAPES["gpt3-175b"])[0] * 4 <= psutil.virtual_memory().available:
        pytest.skip("this machine could hold gpt3-175b's FP32 weights")
    r = cli("serve-tiny", "--shape", "gpt3-175b")
    assert r.returncode == 2 and "pick a smaller shape" in r.stderr, r.stderr


@pytest.mark.timeout(120)
def test_serve_tiny_record_refuses_what_is_not_a_file(tmp_path, cli):
    """--record names a file to append to: a FIFO without a reader blocked the server's start forever."""
    os.mkfifo(tmp_path / "fifo")
    for path in (tmp_path / "fifo", "/dev/null", tmp_path):
        r = cli("serve-tiny", "--port", "0", "--record", str(path))
        assert r.returncode == 2 and "--record" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
