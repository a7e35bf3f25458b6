"""A real HTTP server of known timing, for checking endpoint-serve's figures against physics.

The timing is in the path, so a base_url names it (a base_url takes no ?query):

    /timed/{ttft_ms}/{gap_ms}/{per}/{flags}/v1/completions   (and /v1/chat/completions)

- the first SSE event with text leaves ``ttft_ms`` after the request arrived;
- the request's ``max_tokens`` tokens (``" tN"``: one word, one token) follow one every ``gap_ms``,
  sent ``per`` to an event: event j leaves at arrival + ttft + j * per * gap (times taken from the
  arrival, never summed sleep by sleep, so the server's schedule does not drift);
- ``flags``, joined by ``-``: ``usage`` (a final usage chunk with the true counts) or ``nousage``;
  ``empty`` sends an event without text at once (a chat role chunk, ``{"role": "assistant",
  "content": ""}``, as some servers do before their first token); ``queue`` answers one request
  at a time (a request waits for those before it, and its clock starts when its turn comes),
  else every request is served at once; ``split`` sends each group of ``per`` tokens as ``per``
  one-token events in one write (several events a network chunk) instead of one event.

The schedule is a floor: no event can reach a client before its time, so a client's TTFT, E2E
and pass duration can be checked against strict lower bounds, and against generous upper ones.
``arrivals`` keeps each request's arrival (``time.perf_counter()``, the machine's monotonic
clock, the same in every process of the machine) and its max_tokens, for send-time checks.
It runs on its own event loop in a daemon thread of the test process.
"""

from __future__ import annotations

import asyncio
import json
import time

from aiohttp import web

from tests.workloads.endpoint_faults import serve_in_thread

MODEL = "timed-model"


def schedule(ttft_s: float, gap_s: float, per: int, tokens: int) -> list[float]:
    """Seconds after the start of service at which each event (of up to ``per`` tokens) leaves."""
    events = -(-tokens // per)
    return [ttft_s + j * per * gap_s for j in range(events)]


def _event(api: str, text: str, finish: bool, role: bool = False) -> bytes:
    reason = "length" if finish else None
    if api == "chat":
        choice = {"index": 0, "delta": {"role": "assistant", "content": text} if role else {"content": text},
                  "finish_reason": reason}
        obj = "chat.completion.chunk"
    else:
        choice = {"index": 0, "text": text, "finish_reason": reason}
        obj = "text_completion"
    return b"data: " + json.dumps({"object": obj, "model": MODEL, "choices": [choice]}).encode() + b"\n\n"


class TimedServer:
    def __init__(self):
        self.arrivals: list[tuple[float, int]] = []      # (perf_counter at arrival, max_tokens)
        self.lock: asyncio.Lock | None = None

    async def _stream(self, request, api: str):
        m = request.match_info
        ttft, gap, per = float(m["ttft"]) / 1e3, float(m["gap"]) / 1e3, int(m["per"])
        flags = set(m["flags"].split("-"))
        arrived = time.perf_counter()
        body = await request.json()
        n = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        self.arrivals.append((arrived, n))
        if "queue" in flags:
            async with self.lock:
                return await self._answer(request, api, time.perf_counter(), ttft, gap, per, n, flags)
        return await self._answer(request, api, arrived, ttft, gap, per, n, flags)

    async def _answer(self, request, api, start, ttft, gap, per, n, flags):
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        if "empty" in flags:
            await resp.write(_event(api, "", False, role=True))
        sent = 0
        for at in schedule(ttft, gap, per, n):
            # until the event's own time, from the start of service (a late wake-up does not shift the rest)
            while (left := start + at - time.perf_counter()) > 0:
                await asyncio.sleep(left)
            k = min(per, n - sent)
            words = [f" t{sent + i}" for i in range(k)]
            sent += k
            if "split" in flags:
                await resp.write(b"".join(_event(api, w, sent == n and i == k - 1) for i, w in enumerate(words)))
            else:
                await resp.write(_event(api, "".join(words), sent == n))
        if "usage" in flags:
            await resp.write(b'data: {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": %d}}\n\n' % n)
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    def app(self) -> web.Application:
        async def models(request):
            return web.json_response({"object": "list", "data": [{"id": MODEL, "owned_by": "timed"}]})

        async def version(request):
            return web.json_response({"version": "1.0"})

        async def completions(request):
            return await self._stream(request, "completions")

        async def chat(request):
            return await self._stream(request, "chat")

        app = web.Application()
        prefix = "/timed/{ttft}/{gap}/{per}/{flags}"
        app.router.add_get(prefix + "/v1/models", models)
        app.router.add_get(prefix + "/version", version)
        app.router.add_post(prefix + "/v1/completions", completions)
        app.router.add_post(prefix + "/v1/chat/completions", chat)
        return app


def start() -> tuple[str, TimedServer]:
    """Start a server in a daemon thread: (its http://127.0.0.1:PORT, the server, whose ``arrivals`` fill)."""
    server = TimedServer()

    def app() -> web.Application:
        server.lock = asyncio.Lock()     # made on the server's own loop
        return server.app()

    return f"http://127.0.0.1:{serve_in_thread(app, 'endpoint-timed')}", server


def url(base: str, ttft_ms: int = 200, gap_ms: int = 50, per: int = 1, usage: bool = True,
        queue: bool = False, empty: bool = False, split: bool = False) -> str:
    """The base_url of one timing."""
    flags = "-".join(["usage" if usage else "nousage"] + [f for f, on in (("queue", queue), ("empty", empty),
                                                                           ("split", split)) if on])
    return f"{base}/timed/{ttft_ms}/{gap_ms}/{per}/{flags}"
