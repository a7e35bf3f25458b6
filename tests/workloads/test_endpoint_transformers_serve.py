"""endpoint-serve against a third-party engine: `transformers serve` (transformers' serving extras)
over a tiny Llama with random weights and a word-level tokenizer (benchmarks/hf_model.py, the H200
script's builder), saved to a temporary folder (nothing is downloaded).  Skipped where the serving
extras (fastapi, uvicorn) are missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest

from benchmarks.hf_model import build
from tests.workloads.conftest import assert_ok, run_entries
from tests.workloads.test_endpoint_serve import free_port, in_process

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")


@pytest.fixture(scope="module")
def hf_serve(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("tiny-hf"))
    build(folder, "tiny")          # llm-serve's tiny shape, word-level tokenizer, no end-of-sequence token
    port = free_port()
    code = ("import sys; from transformers.cli.transformers import main; "
            f"sys.argv = ['transformers', 'serve', {folder!r}, '--device', 'cpu', '--port', '{port}']; main()")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 400
        while True:
            try:
                with urllib.request.urlopen(url + "/v1/models", timeout=2) as r:
                    if json.load(r)["data"]:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"transformers serve did not start: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.5)
        yield url, folder
    finally:
        proc.terminate()
        proc.wait(30)


def test_completions_and_chat_through_the_runner(hf_serve, db_path):
    url, folder = hf_serve
    rs = run_entries(db_path, [
        {"workload": "endpoint-serve", "params": {"base_url": url, "ignore_eos": False, "concurrency": 4}},
        {"workload": "endpoint-serve", "params": {"base_url": url, "ignore_eos": False, "api": "chat"}},
    ], repeats=2)
    for r in rs:
        assert_ok(r)
        e = r.extra
        assert e.model == folder and e.engine.startswith("local")   # its /v1/models' owned_by
        assert e.errors == {} and e.tokens_from == ["usage"]
        for x in e.request_records:   # no end-of-sequence token: every request runs to max_tokens
            assert x["output_tokens"] == 8 and x["ttft"] <= x["e2e"]
    # a completion's prompt is its 16 words, no special token
    assert {x["prompt_tokens"] for x in rs[0].extra.request_records} == {16}


def test_a_field_the_engine_refuses_is_one_clear_line(hf_serve):
    url, _ = hf_serve
    # transformers serve refuses vLLM's ignore_eos extension (HTTP 422): the warm-up says so
    with pytest.raises(RuntimeError, match="1 http_4xx .*HTTP 422: Unexpected fields in the request: {'ignore_eos'}"):
        in_process({"base_url": url})
