"""One streamed request to an OpenAI-compatible server, timed as the client sees it.

The request body is what vLLM's serving benchmark sends (``stream``, ``stream_options:
{include_usage: true}``, ``max_tokens``, ``ignore_eos`` so every request generates its full
length; ``temperature`` 0).  The answer is read as server-sent events line by line: ``data:
{json}`` chunks carry text in ``choices[0].text`` (completions) or ``choices[0].delta.content``
(chat), a chunk with ``usage`` gives the server's token counts, ``data: [DONE]`` ends the
stream (or, from a server that sends none, a clean close after a chunk with a finish_reason).
Anything else ends the request as one of ``metrics.ERROR_KINDS``, with the first line of what
went wrong: a benchmark of a misbehaving server counts failures, it never hangs
(``request_timeout_s`` bounds each request, connection included).
"""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp

from gpuarena.redact import redact
from gpuarena.safeio import printable
from gpuarena.workloads.endpoint.metrics import Record

PATHS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}
MAX_DETAIL = 200
# Every byte a server sends is read under a cap: a server that answers an endless body (an error
# page, a probe, one event line without end) costs this much memory at most, never the host's.
MAX_ERROR_BODY = 64 << 10       # an error answer: its message is in the first line or the JSON
MAX_PROBE_BODY = 1 << 20        # /version, /v1/models
MAX_EVENT_LINE = 1 << 20        # one server-sent event line (a chunk of a few tokens is ~1 kB)


async def read_capped(content, cap: int) -> tuple[bytes, bool]:
    """Up to ``cap`` bytes of a body, and whether there was more (the rest is never read)."""
    buf = bytearray()
    while len(buf) <= cap:
        chunk = await content.read(cap + 1 - len(buf))
        if not chunk:
            return bytes(buf), False
        buf += chunk
    return bytes(buf[:cap]), True


async def event_lines(content, cap: int = MAX_EVENT_LINE):
    """(line, arrival) for each line of a streamed body, each at most ``cap`` bytes (a longer one is a
    malformed answer).  ``arrival`` is ``time.perf_counter()`` when the line is cut from what was
    read: before it is decoded or parsed (lines that came in one read are stamped one after
    another, microseconds apart, as vLLM's client stamps each message of a read)."""
    pending = bytearray()
    while True:
        chunk = await content.readany()
        if not chunk:
            break
        pending += chunk
        while True:
            cut = pending.find(b"\n")
            if cut < 0:
                break
            yield bytes(pending[:cut + 1]), time.perf_counter()
            del pending[:cut + 1]
        if len(pending) > cap:
            raise _Failed("malformed", f"an event line longer than {cap >> 10} KiB (the reader's cap)")
    if pending:
        yield bytes(pending), time.perf_counter()


def payload(api: str, model: str, prompt, max_tokens: int | None, ignore_eos: bool) -> dict:
    """The JSON body of one request.  ``prompt``: text, or (chat) a list of messages."""
    body: dict = {"model": model, "stream": True, "stream_options": {"include_usage": True},
                  "temperature": 0.0}
    if api == "chat":
        body["messages"] = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if ignore_eos:
        body["ignore_eos"] = True
    return body


def headers(api_key: str | None) -> dict:
    h = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    if api_key:
        h["Authorization"] = f"Bearer {api_key}"
    return h


def _first_line(text: str) -> str:
    """A server's text as one storable, printable line: no control characters (an escape code would
    reach the terminal, and a stored text with one is refused), no password, bounded."""
    line = next((x for x in str(text).strip().splitlines() if x.strip()), "")
    return redact(" ".join(printable(line).split()))[:MAX_DETAIL]


def _error_message(text: str) -> str:
    """The message of an error body: OpenAI's {"error": {"message"}}, FastAPI's {"detail"}, else its first line."""
    try:
        body = json.loads(text)
    except ValueError:
        return _first_line(text)
    err = body.get("error", body) if isinstance(body, dict) else body
    msg = (err.get("message") or err.get("detail")) if isinstance(err, dict) else err
    return _first_line(msg if isinstance(msg, str) else text)


def chunk_text(event: dict, api: str) -> str | None:
    """The text a chunk carries ('' for none); None when the chunk is not the API's shape."""
    choices = event.get("choices")
    if not isinstance(choices, list):
        return None
    if not choices:
        return ""             # the usage chunk: no choices
    first = choices[0]
    if not isinstance(first, dict):
        return None
    if api == "chat":
        delta = first.get("delta")
        if not isinstance(delta, dict):
            return None
        text = delta.get("content") or delta.get("reasoning_content") or ""
    else:
        text = first.get("text") or ""
    return text if isinstance(text, str) else None


class _Failed(Exception):
    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind, self.detail = kind, detail


def _count(value, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and least <= value <= 10**9


def text_tokens(text: str) -> int:
    """Tokens in one streamed chunk's text, counted without the model's tokenizer: its words
    (whitespace-separated runs), at least 1.  A chunk carries at least one token, and no token of
    the usual BPE or SentencePiece vocabularies spans two words, so this is exact for one-token
    chunks and for chunks of whole-word tokens, and never more than the truth otherwise."""
    return max(1, len(text.split()))


def _finish(rec: Record, counted: int, usage, last: float | None, t0: float) -> None:
    """A complete stream: its end-to-end time and token counts (the server's usage when it gave one)."""
    if rec.chunks == 0:
        raise _Failed("empty", "the stream ended without any generated text")
    rec.e2e = last - t0
    said = usage.get("completion_tokens") if isinstance(usage, dict) else None
    if _count(said, least=1):     # the server's own count, when it is a count (true is not 1, -5 is none)
        rec.output_tokens, rec.tokens_from = said, "usage"
        if _count(usage.get("prompt_tokens"), least=0):
            rec.prompt_tokens = usage["prompt_tokens"]
    else:
        rec.output_tokens = counted
    rec.ok = True


async def _read_stream(resp, api: str, rec: Record, t0: float, on_text=None) -> None:
    """Fill ``rec`` from an SSE body; raise _Failed on a bad event or an early end.  The stream is
    complete at ``data: [DONE]``, or when it closes cleanly after a chunk with a finish_reason
    (``transformers serve`` sends no [DONE])."""
    last = None
    counted = events = 0
    usage = None
    finished = False
    async for raw, arrival in event_lines(resp.content):
        line = raw.decode("utf-8", errors="replace").strip()
        if not line or line.startswith(":") or not line.startswith("data:"):
            continue          # blank separators, comments, event:/id:/retry: fields
        events += 1
        data = line[5:].strip()
        if data == "[DONE]":
            _finish(rec, counted, usage, last, t0)
            return
        try:
            event = json.loads(data)
        except json.JSONDecodeError:
            raise _Failed("malformed", f"an event is not JSON: {data[:80]!r}") from None
        if not isinstance(event, dict):
            raise _Failed("malformed", f"an event is not a JSON object: {data[:80]!r}")
        if "error" in event:
            err = event["error"]
            msg = err.get("message") if isinstance(err, dict) else err
            raise _Failed("stream_error", f"error event: {_first_line(msg)}")
        if event.get("usage"):
            usage = event["usage"]
        text = chunk_text(event, api)
        if text is None:
            raise _Failed("malformed", f"an event has no {api} choices: {data[:80]!r}")
        finished = finished or any(isinstance(c, dict) and c.get("finish_reason") for c in event["choices"])
        if text:
            if last is None:
                rec.ttft = arrival - t0
            else:
                rec.gaps.append(arrival - last)
            last = arrival
            rec.chunks += 1
            counted += text_tokens(text)
            if on_text is not None:
                on_text(text)
    if not events:
        raise _Failed("malformed", f"the answer is not a server-sent event stream "
                                   f"(Content-Type {resp.headers.get('Content-Type', 'none')})")
    if not finished:
        raise _Failed("stream_cut", f"the stream ended after {rec.chunks} chunk(s) without [DONE] or a finish_reason")
    _finish(rec, counted, usage, last, t0)


async def send(session: aiohttp.ClientSession, url: str, api: str, body: dict, hdrs: dict,
               timeout_s: float, origin: float, on_text=None) -> Record:
    """One request; never raises for what the server does (the record says what went wrong).
    ``origin``: the pass's start (``time.perf_counter()``); the record's ``sent`` is from it.
    ``on_text`` is called with each streamed piece of text (a multi-turn session keeps the answer).
    The body is encoded before the clock starts: the send time (and TTFT's start) is the moment
    the request is handed to the connection, as vLLM's ``st``."""
    rec = Record(sent=0.0, asked=body.get("max_tokens"))
    data = json.dumps(body).encode()
    t0 = time.perf_counter()
    rec.sent = t0 - origin
    try:
        async with asyncio.timeout(timeout_s):
            async with session.post(url, data=data, headers=hdrs, allow_redirects=False) as resp:
                if 300 <= resp.status < 400:
                    where = resp.headers.get("Location", "nowhere")
                    raise _Failed("redirect", _first_line(f"HTTP {resp.status} to {where} (not followed: "
                                                          "point base_url at the server that answers)"))
                if resp.status != 200:
                    body, _ = await read_capped(resp.content, MAX_ERROR_BODY)
                    text = body.decode("utf-8", errors="replace")
                    kind = "http_5xx" if resp.status >= 500 else "http_4xx"
                    raise _Failed(kind, f"HTTP {resp.status}: {_error_message(text) or resp.reason}")
                await _read_stream(resp, api, rec, t0, on_text)
    except _Failed as f:
        rec.error, rec.detail = f.kind, f.detail
    except TimeoutError:
        rec.error, rec.detail = "timeout", f"no complete answer within {timeout_s:g} s"
    except aiohttp.ClientConnectorError as e:
        rec.error, rec.detail = "connect", _first_line(f"{url}: {e.os_error or e}")
    except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError) as e:
        rec.error, rec.detail = "stream_cut", _first_line(f"{e.__class__.__name__}: {e}")
    except aiohttp.ClientResponseError as e:
        rec.error, rec.detail = "malformed", _first_line(f"{e.__class__.__name__}: {e.message}")
    except (aiohttp.http_exceptions.HttpProcessingError, ValueError) as e:   # a header past aiohttp's caps
        rec.error, rec.detail = "malformed", _first_line(f"a malformed answer ({e.__class__.__name__}: {e})")
    except (aiohttp.ClientError, OSError) as e:
        rec.error, rec.detail = "connect", _first_line(f"{e.__class__.__name__}: {e}")
    if not rec.ok:
        rec.gaps = []
        rec.ttft = rec.e2e = None
        rec.chunks = 0
    return rec


async def get_json(session: aiohttp.ClientSession, url: str, hdrs: dict, timeout_s: float = 5.0,
                   why: list | None = None):
    """GET a small JSON document, or None when there is none (a probe, never an error); ``why`` gets
    a line for a server that could not be spoken to (TLS failed: it answers, just not in plain words)."""
    try:
        async with asyncio.timeout(timeout_s):
            async with session.get(url, headers=hdrs, allow_redirects=False) as resp:
                if resp.status != 200:
                    return None
                body, more = await read_capped(resp.content, MAX_PROBE_BODY)
                return None if more else json.loads(body.decode("utf-8", errors="replace"))
    except (aiohttp.ClientSSLError, aiohttp.ServerFingerprintMismatch) as e:
        if why is not None:
            why.append(_first_line(f"TLS failed: {e}"))
        return None
    except (TimeoutError, aiohttp.ClientError, OSError, ValueError, RecursionError):
        return None
