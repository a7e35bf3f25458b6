"""`gpuarena serve-tiny`: an OpenAI-compatible server over the project's own Llama-style decoder.

A real server for endpoint-serve's tests and for trying the load generator without a GPU: aiohttp
serves ``/v1/completions`` and ``/v1/chat/completions`` (streamed as server-sent events with a
final ``usage`` chunk when ``stream_options.include_usage`` asks, or one JSON answer),
``/v1/models`` and ``/version``.  Each request is a prefill of its prompt and a greedy decode loop
over llm/model.py's decoder with random weights (``tiny`` shape by default), one streamed chunk per
generated token; requests interleave token by token on one event loop.  The tokenizer is a word
hash: each whitespace-separated word of the prompt is one token, each generated token is the word
`` t<id>``, so a prompt of N words is N prompt tokens in ``usage``.  There is no end-of-sequence
token: every request generates ``max_tokens`` (default 16).  With ``record`` (``--record FILE``) each
accepted request is appended to a JSONL file as it arrives (its wall time, prompt text, chat
roles, prompt tokens and max_tokens): what a load generator claims to send, seen from the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
import zlib

import torch
from aiohttp import web

from gpuarena.workloads.llm.cache import DynamicCache
from gpuarena.workloads.llm.model import build
from gpuarena.workloads.llm.shapes import SHAPES

MODEL_NAME = "tiny-llama"
OWNER = "gpuarena serve-tiny"
DEFAULT_MAX_TOKENS = 16


class TinyEngine:
    """The decoder, its word-hash tokenizer and one request's generation loop."""

    def __init__(self, shape: str = "tiny", seed: int = 0):
        torch.manual_seed(seed)
        self.cfg = SHAPES[shape]
        self.model = build(self.cfg, "cpu").eval()

    def encode(self, text: str) -> list[int]:
        return [zlib.crc32(w.encode()) % self.cfg.vocab_size for w in text.split()]

    @staticmethod
    def decode(token: int) -> str:
        return f" t{token}"

    @torch.inference_mode()
    def start(self, ids: list[int]):
        """Prefill: (cache, first generated token)."""
        cache = DynamicCache(self.cfg.n_layers)
        logits = self.model(torch.tensor([ids]), cache, last_only=True)
        return cache, int(logits[0, -1].argmax())

    @torch.inference_mode()
    def next(self, cache, token: int, pos: int) -> int:
        logits = self.model(torch.tensor([[token]]), cache, torch.tensor([pos]))
        return int(logits[0, -1].argmax())

    async def generate(self, ids: list[int], n: int):
        """The n generated tokens, one at a time (the loop yields to other requests between tokens)."""
        cache, tok = self.start(ids)
        for i in range(n):
            if i:
                tok = self.next(cache, tok, len(ids) + i - 1)
            yield tok
            await asyncio.sleep(0)


def _error(status: int, message: str, kind: str = "invalid_request_error") -> web.Response:
    return web.json_response({"error": {"message": message, "type": kind, "code": status}}, status=status)


def _prompt_text(api: str, body: dict) -> str | None:
    if api == "chat":
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not all(isinstance(m, dict) and isinstance(m.get("content"), str)
                                                 for m in msgs):
            return None
        return " ".join(m["content"] for m in msgs)
    prompt = body.get("prompt")
    return prompt if isinstance(prompt, str) else None


async def _read_request(engine: TinyEngine, api_key: str | None, request, api: str):
    """The checked request: (body, prompt ids, max_tokens), or the error response to send instead."""
    if api_key and request.headers.get("Authorization") != f"Bearer {api_key}":
        return _error(401, "a valid API key is required (Authorization: Bearer ...)", "authentication_error")
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):        # JSONDecodeError is a ValueError
        return _error(400, "the request body is not JSON")
    except RecursionError:
        return _error(400, "the request body is nested too deeply")
    except web.HTTPException as exc:                # a body past the server's size limit
        return _error(exc.status, exc.reason)
    if not isinstance(body, dict):
        return _error(400, "the request body is not a JSON object")
    if not isinstance(body.get("stream_options", {}), (dict, type(None))):
        return _error(400, "stream_options must be an object")
    if body.get("model") != MODEL_NAME:
        return _error(404, f"The model `{body.get('model')}` does not exist.", "NotFoundError")
    text = _prompt_text(api, body)
    if text is None:
        return _error(400, "needs a text prompt" if api == "completions" else "needs messages with text content")
    n = body.get("max_tokens", body.get("max_completion_tokens", DEFAULT_MAX_TOKENS))
    ids = engine.encode(text) or [0]
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        return _error(400, "max_tokens must be a positive integer")
    if len(ids) + n > engine.cfg.max_seq_len:
        return _error(400, f"prompt ({len(ids)} tokens) + max_tokens ({n}) exceeds the model's "
                           f"{engine.cfg.max_seq_len}")
    return body, ids, n


def _record(record, api: str, body: dict, ids: list[int], n: int, t: float) -> None:
    msgs = body.get("messages") if api == "chat" else None
    row = {"t": t, "api": api, "prompt": _prompt_text(api, body), "prompt_tokens": len(ids), "max_tokens": n}
    if msgs is not None:
        row["roles"] = [m.get("role") for m in msgs]
    record.write(json.dumps(row) + "\n")
    record.flush()


async def _complete(engine: TinyEngine, api_key: str | None, request, api: str, record=None):
    t = time.time()
    checked = await _read_request(engine, api_key, request, api)
    if isinstance(checked, web.Response):
        return checked
    body, ids, n = checked
    if record is not None:
        _record(record, api, body, ids, n, t)
    rid = ("chatcmpl-" if api == "chat" else "cmpl-") + uuid.uuid4().hex[:16]
    obj = "chat.completion" if api == "chat" else "text_completion"
    usage = {"prompt_tokens": len(ids), "completion_tokens": n, "total_tokens": len(ids) + n}
    head = {"id": rid, "created": int(time.time()), "model": MODEL_NAME}
    if not body.get("stream"):
        out = "".join([engine.decode(t) async for t in engine.generate(ids, n)])
        choice = ({"index": 0, "message": {"role": "assistant", "content": out}, "finish_reason": "length"}
                  if api == "chat" else {"index": 0, "text": out, "finish_reason": "length"})
        return web.json_response({**head, "object": obj, "choices": [choice], "usage": usage})
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await resp.prepare(request)

    async def send(event: dict) -> None:
        await resp.write(b"data: " + json.dumps({**head, "object": obj + ("" if api == "completions"
                                                                           else ".chunk"), **event}).encode()
                         + b"\n\n")

    try:
        await _stream(engine, ids, n, api, send)
        if (body.get("stream_options") or {}).get("include_usage"):
            await send({"choices": [], "usage": usage})
    except (ConnectionError, asyncio.CancelledError):   # the client hung up: nothing more to send
        return resp
    except Exception as exc:  # noqa: BLE001 - a failure mid-stream is told as an error event, then [DONE]
        failed = {"error": {"message": f"generation failed: {exc.__class__.__name__}", "type": "server_error",
                            "code": 500}}
        try:
            await resp.write(b"data: " + json.dumps(failed).encode() + b"\n\n")
        except ConnectionError:
            return resp
    try:
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
    except ConnectionError:
        pass
    return resp


async def _stream(engine: TinyEngine, ids: list[int], n: int, api: str, send) -> None:
    i = 0
    async for tok in engine.generate(ids, n):
        i += 1
        fin = "length" if i == n else None
        piece = engine.decode(tok)
        await send({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": fin}
                                if api == "chat" else {"index": 0, "text": piece, "finish_reason": fin}]})


def make_app(engine: TinyEngine, api_key: str | None = None, record=None) -> web.Application:
    created = int(time.time())

    async def models(request):
        return web.json_response({"object": "list", "data": [
            {"id": MODEL_NAME, "object": "model", "created": created, "owned_by": OWNER,
             "max_model_len": engine.cfg.max_seq_len}]})

    async def version(request):
        from gpuarena import __version__

        return web.json_response({"version": __version__})

    app = web.Application()
    app.router.add_get("/v1/models", models)
    app.router.add_get("/version", version)

    async def completions(request):
        return await _complete(engine, api_key, request, "completions", record)

    async def chat(request):
        return await _complete(engine, api_key, request, "chat", record)

    app.router.add_post("/v1/completions", completions)
    app.router.add_post("/v1/chat/completions", chat)
    return app


async def serve(host: str, port: int, shape: str = "tiny", api_key: str | None = None, threads: int = 1,
                record=None) -> None:
    """Serve until the process is ended; prints one line with the address once it listens.
    ``record``: an open text file each accepted request is appended to."""
    torch.set_num_threads(threads)
    runner = web.AppRunner(make_app(TinyEngine(shape), api_key, record), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1]
    shown = f"[{host}]" if ":" in host else host
    print(f"gpuarena serve-tiny: listening on http://{shown}:{bound} (model {MODEL_NAME}, shape {shape}, "
          f"pid {os.getpid()})", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
