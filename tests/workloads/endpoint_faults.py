"""A real HTTP server that misbehaves on purpose, for endpoint-serve's bad-input tests.

Each path prefix is one behaviour in front of the usual OpenAI routes (``/v1/models`` answers
everywhere, so the model name is learnt):
  /ok        a well-behaved stream (3 tokens, with usage)
  /nousage   a well-behaved stream without a usage chunk
  /fail500   every completion is HTTP 500
  /flaky     every second completion is HTTP 500, the others are /ok
  /malformed a stream whose second event is not JSON
  /cut       the connection is dropped after one token, without [DONE]
  /hang      one token, then nothing until the client gives up
  /errevent  an error event in the middle of the stream
  /longline  an event line of 1.5 MB
  /json      one JSON answer where a stream was asked for
  /endless500   HTTP 500 whose body never ends
  /endlessline  a 200 stream whose first event line never ends
  /endlessprobe a /version answer that never ends (the engine probe)
  /badusage    a usage chunk with true and a negative count
  /redirect    HTTP 307 to another host
  /escape       terminal escape codes in the model id and owner /v1/models gives, then /ok
  /queue     a server of known timing: one request at a time, each answered (/ok) after 0.1 s, so
             10 requests/s at most and a queue that grows under a faster arrival rate
  /slowqueue the same at 0.5 s a request: a margin to an SLO that a loaded machine's delays stay inside
It runs on its own event loop in a daemon thread of the test process; the runner's child
process reaches it over localhost like any server.
"""

from __future__ import annotations

import asyncio
import json
import threading

from aiohttp import web

MODEL = "fault-model"


def _chunk(text: str) -> bytes:
    return b"data: " + json.dumps({"object": "text_completion", "model": MODEL,
                                   "choices": [{"index": 0, "text": text, "finish_reason": None}]}).encode() + b"\n\n"


def make_app() -> web.Application:
    calls = {"flaky": 0}
    one_at_a_time = asyncio.Lock()

    async def models(request):
        if request.match_info["mode"] == "escape":   # what a hostile server says about itself
            said = {"id": MODEL + "\x1b[2J", "owned_by": "evil\x1b]0;x\x07"}
            return web.json_response({"object": "list", "data": [said]})
        return web.json_response({"object": "list", "data": [{"id": MODEL, "owned_by": "faults"}]})

    async def good(request, usage: bool | bytes = True):
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for word in (" a", " b", " c"):
            await resp.write(_chunk(word))
        if usage is True:
            await resp.write(b'data: {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3}}\n\n')
        elif usage:
            await resp.write(usage)
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def endless(request, status: int, head: bytes = b""):
        resp = web.StreamResponse(status=status, headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(head)
        block = b"x" * (64 << 10)
        try:
            while True:              # until the client hangs up
                await resp.write(block)
        except (ConnectionError, RuntimeError):
            pass
        return resp

    async def version(request):
        if request.match_info["mode"] == "endlessprobe":
            return await endless(request, 200, b'{"version": "')
        return web.json_response({"version": "1.0"})

    async def complete(request):
        mode = request.match_info["mode"]
        if mode == "endless500":
            return await endless(request, 500)
        if mode == "endlessline":
            return await endless(request, 200, b"data: ")
        if mode in ("ok", "escape"):
            return await good(request)
        if mode == "badusage":
            return await good(request, b'data: {"choices": [], "usage": {"prompt_tokens": -5, '
                                       b'"completion_tokens": true}}\n\n')
        if mode == "redirect":
            raise web.HTTPTemporaryRedirect("http://elsewhere.invalid:9/v1/completions")
        if mode in ("queue", "slowqueue"):
            async with one_at_a_time:
                await asyncio.sleep(0.1 if mode == "queue" else 0.5)
                return await good(request)
        if mode == "nousage":
            return await good(request, usage=False)
        if mode == "json":
            return web.json_response({"choices": [{"index": 0, "text": " a b c"}]})
        if mode == "flaky":
            calls["flaky"] += 1
        if mode == "fail500" or (mode == "flaky" and calls["flaky"] % 2 == 0):
            return web.json_response({"error": {"message": "engine overloaded\nsecond line"}}, status=500)
        if mode == "flaky":
            return await good(request)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(_chunk(" a"))
        if mode == "malformed":
            await resp.write(b"data: {this is not json\n\n")
        elif mode == "errevent":
            await resp.write(b'data: {"error": {"message": "CUDA out of memory", "code": 500}}\n\n')
        elif mode == "cut":
            request.transport.close()          # the connection dropped mid-stream
            return resp
        elif mode == "longline":
            await resp.write(b"data: " + b"x" * 1_500_000 + b"\n\n")
        elif mode == "hang":
            await asyncio.sleep(3600)
        await resp.write(b"data: [DONE]\n\n")
        return resp

    app = web.Application()
    app.router.add_get("/{mode}/v1/models", models)
    app.router.add_get("/{mode}/version", version)
    app.router.add_post("/{mode}/v1/completions", complete)
    return app


def serve_in_thread(app_factory, name: str, wait_s: float = 30) -> int:
    """Serve ``app_factory()`` (called on the server's own event loop) on a free localhost port from a daemon
    thread; the port, once it listens."""
    ready = threading.Event()
    port: list[int] = []

    def main():
        async def run():
            runner = web.AppRunner(app_factory(), access_log=None, shutdown_timeout=0.1)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            port.append(runner.addresses[0][1])
            ready.set()
            await asyncio.Event().wait()

        asyncio.run(run())

    threading.Thread(target=main, daemon=True, name=name).start()
    if not ready.wait(wait_s):
        raise RuntimeError(f"{name}: the test server did not listen within {wait_s:g} s")
    return port[0]


def start() -> int:
    """Start the server in a daemon thread; its port."""
    return serve_in_thread(make_app, "endpoint-faults")
