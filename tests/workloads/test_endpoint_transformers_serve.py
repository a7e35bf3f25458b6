"""endpoint-serve against a third-party engine: `transformers serve` (transformers' serving extras)
over a tiny Llama with random weights and a word-level tokenizer built here, saved to a temporary
folder (nothing is downloaded).  Skipped where the serving extras (fastapi, uvicorn) are missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest

from gpuarena.workloads.endpoint.load import WORDS
from tests.workloads.conftest import assert_ok, run_entries
from tests.workloads.test_endpoint_serve import free_port, in_process

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")


def build_model(folder: str) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "user": 3, "assistant": 4, ":": 5}
    for w in WORDS:                       # endpoint-serve's prompt words: one token each
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    fast.chat_template = "{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} {% endfor %}assistant :"
    fast.save_pretrained(folder)
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                      bos_token_id=1, eos_token_id=2)
    import torch

    torch.manual_seed(0)                  # one model every run (an unseeded one answered EOS first now and then)
    model = LlamaForCausalLM(cfg)
    model.generation_config.min_new_tokens = 1   # never an empty answer: EOS is allowed from the second token
    model.save_pretrained(folder)


@pytest.fixture(scope="module")
def hf_serve(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("tiny-hf"))
    build_model(folder)
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
        e = r["extra"]
        assert e["model"] == folder and e["engine"].startswith("local")   # its /v1/models' owned_by
        assert e["errors"] == {} and e["tokens_from"] == ["usage"]
        for x in e["request_records"]:
            assert 1 <= x["output_tokens"] <= 8 and x["ttft"] <= x["e2e"]
    # a completion's prompt is its 16 words, no special token
    assert {x["prompt_tokens"] for x in rs[0]["extra"]["request_records"]} == {16}


def test_a_field_the_engine_refuses_is_one_clear_line(hf_serve):
    url, _ = hf_serve
    # transformers serve refuses vLLM's ignore_eos extension (HTTP 422): the warm-up says so
    with pytest.raises(RuntimeError, match="1 http_4xx .*HTTP 422: Unexpected fields in the request: {'ignore_eos'}"):
        in_process({"base_url": url})
