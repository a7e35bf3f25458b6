"""Serving figures from per-request records, as vLLM's serving benchmark defines them.

vLLM's ``benchmarks/benchmark_serving.py`` (``calculate_metrics``; ``vllm bench serve`` since)
is what most people who deploy an engine read, so every figure here follows its definitions:

- TTFT: from sending the request to the arrival of the first streamed chunk that carries text;
- ITL: every gap between the arrivals of two text-carrying chunks, pooled over all requests.  A
  chunk's gap is not divided among the tokens it carries (vLLM's ``itl`` is per chunk too), so a
  server streaming k tokens an event shows k times its per-token gap here;
- TPOT of a request: (E2E - TTFT) / (output tokens - 1), for requests of more than one token
  (for goodput a one-token request counts as TPOT 0, as vLLM does).  With k tokens a chunk the
  first chunk's k tokens all count as arrived at TTFT, as in vLLM;
- E2E: from sending the request to the arrival of its last text-carrying chunk;
- throughputs are totals over the benchmark's duration (first dispatch to last completion);
  only successful requests count;
- goodput: successful requests meeting *every* SLO, per second of that duration;
- percentiles interpolate linearly between order statistics (numpy's default, which vLLM calls).

Two figures vLLM does not print say what ITL is made of when a server sends several tokens an
event (speculative decoding, a server that batches its writes): ``tokens_per_chunk`` (output
tokens over text chunks, over all requests) and ``itl_per_token_ms``, each chunk gap divided by
its request's mean tokens per chunk (equal to ITL when every chunk is one token).
A chunk "arrives" when its line is cut from what the client read (client.py event_lines), before
it is decoded or parsed; a request is "sent" when its encoded body is handed to the connection.
``send_lag_ms`` is how late each request was sent after its due time (its trace timestamp or
its arrival in the Poisson process; with a ``concurrency`` cap it includes the wait for a slot):
a replay is faithful while it stays near 0.
Output tokens are the server's ``usage``; without one, each chunk's words (at least 1 a chunk:
client.text_tokens), a count that is exact for one-token chunks and whole-word tokens.

Goodput as the rate of requests within every SLO is vLLM's (PR #9338, RFC #8782, after the
DistServe post at hao-ai-lab.github.io/blogs/distserve).  ``attainment`` (the share of all requests
sent that met every SLO, failures counted as missing) is what a rate sweep holds to a target
(``slo_attainment``; its default 0.9 is an assumption, not a standard).
Nothing here reads a clock: records in, figures out, so the arithmetic is tested by hand.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Callable

# Why a request failed (records' ``error``); the run stores a count per kind.
ERROR_KINDS = {
    "connect": "the server could not be reached (refused, unknown host, reset before a reply)",
    "http_4xx": "the server refused the request (4xx status)",
    "http_5xx": "the server failed the request (5xx status)",
    "timeout": "no complete answer within request_timeout_s",
    "stream_cut": "the stream ended before its [DONE] event",
    "stream_error": "the server sent an error event inside the stream",
    "malformed": "an event that is not the OpenAI JSON chunk format",
    "empty": "a complete stream without any generated text",
    "redirect": "the server answered with a redirect, not followed (the stored base_url names the first server)",
}


@dataclass
class Record:
    """One request as the client saw it (seconds; offsets from the start of its pass)."""

    sent: float                        # when it was sent, from the pass start
    due: float | None = None           # when it was due (its trace time or arrival), from the pass start;
                                       # None for a later turn of a session (it follows the answer before)
    ok: bool = False
    ttft: float | None = None
    gaps: list[float] = field(default_factory=list)   # gaps between text chunks' arrivals, after the first
    e2e: float | None = None
    prompt_tokens: int | None = None   # from usage; None when the server gave none
    output_tokens: int = 0
    tokens_from: str = "counted"       # "usage" (the server's count) or "counted" (the words of its text chunks)
    asked: int | None = None           # the max_tokens the request asked for
    chunks: int = 0                    # text-carrying chunks streamed (0: not known, as for an imported record)
    error: str | None = None           # one of ERROR_KINDS when not ok
    detail: str = ""                   # the first line of what went wrong

    def tpot(self) -> float | None:
        """Seconds per output token after the first; None for a one-token or failed request."""
        if not self.ok or self.output_tokens <= 1 or self.e2e is None or self.ttft is None:
            return None
        return (self.e2e - self.ttft) / (self.output_tokens - 1)

    def tokens_per_chunk(self) -> float | None:
        """Output tokens per text chunk; None when the chunks are not known."""
        return self.output_tokens / self.chunks if self.ok and self.chunks and self.output_tokens else None

    def meets(self, slo_ttft_ms: float, slo_tpot_ms: float) -> bool:
        """Whether the request succeeded within both SLOs (a one-token request: TPOT 0)."""
        if not self.ok or self.ttft is None:
            return False
        return self.ttft * 1e3 <= slo_ttft_ms and (self.tpot() or 0.0) * 1e3 <= slo_tpot_ms

    def to_dict(self, gaps: bool = True) -> dict:
        d = asdict(self)
        if not gaps:
            d.pop("gaps")
        return d


def percentile(xs: list[float], q: float) -> float:
    """The q-th percentile (0..100), linear between order statistics (numpy's default)."""
    s = sorted(xs)
    if not s:
        raise ValueError("percentile of no values")
    pos = (len(s) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def spread_ms(xs: list[float]) -> dict | None:
    """Mean and p50/p90/p99 of seconds, in milliseconds; None without values."""
    if not xs:
        return None
    return {"mean": sum(xs) / len(xs) * 1e3, "p50": percentile(xs, 50) * 1e3,
            "p90": percentile(xs, 90) * 1e3, "p99": percentile(xs, 99) * 1e3}


def errors_by_kind(records: list[Record]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in records:
        if not r.ok:
            out[r.error or "unknown"] = out.get(r.error or "unknown", 0) + 1
    return dict(sorted(out.items()))


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def summarize(records: list[Record], duration_s: float, slo_ttft_ms: float, slo_tpot_ms: float) -> dict:
    """The run's figures from its requests and the seconds they took (see the module doc)."""
    done = [r for r in records if r.ok]
    chunked = [r for r in done if r.chunks]
    good = [r for r in done if r.meets(slo_ttft_ms, slo_tpot_ms)]
    out_tokens = sum(r.output_tokens for r in done)
    prompt = [r.prompt_tokens for r in done if r.prompt_tokens is not None]
    per_s = (lambda x: x / duration_s) if duration_s > 0 else (lambda x: None)
    return {
        "requests": len(records), "completed": len(done), "failed": len(records) - len(done),
        "errors": errors_by_kind(records), "duration_s": duration_s,
        "output_tokens": out_tokens, "prompt_tokens": sum(prompt) if prompt else None,
        "tokens_from": sorted({r.tokens_from for r in done}),
        "output_tokens_per_s": per_s(out_tokens), "requests_per_s": per_s(len(done)),
        "total_tokens_per_s": per_s(out_tokens + sum(prompt)) if prompt else None,
        "goodput_requests_per_s": per_s(len(good)),
        "goodput_tokens_per_s": per_s(sum(r.output_tokens for r in good)),
        "slo_attainment": len(good) / len(records) if records else None,
        "slo_ttft_ms": slo_ttft_ms, "slo_tpot_ms": slo_tpot_ms,
        "ttft_ms": spread_ms([r.ttft for r in done if r.ttft is not None]),
        "tpot_ms": spread_ms([t for r in done if (t := r.tpot()) is not None]),
        "itl_ms": spread_ms([g for r in done for g in r.gaps]),
        "tokens_per_chunk": _ratio(sum(r.output_tokens for r in chunked), sum(r.chunks for r in chunked)),
        "send_lag_ms": spread_ms([max(0.0, r.sent - r.due) for r in records if r.due is not None]),
        "itl_per_token_ms": spread_ms([g / k for r in chunked if (k := r.tokens_per_chunk()) for g in r.gaps]),
        "e2e_ms": spread_ms([r.e2e for r in done if r.e2e is not None]),
    }


def search_rate(holds: Callable[[float], bool], start: float, limit: float, refine: int,
                floor: float | None = None) -> tuple[float | None, list[tuple[float, bool]]]:
    """The highest request rate for which ``holds(rate)`` is true, assuming it is monotone
    (true up to some rate, false beyond).  Doubles from ``start`` until it fails or reaches
    ``limit`` (halves instead when ``start`` already fails, down to ``floor``, start / 8 by default), then bisects
    between the last rate that held and the first that did not ``refine`` times.

    Returns (best rate or None when even the floor fails, every (rate, held) tried in order)."""
    floor = start / 8 if floor is None else floor   # a pass at a low rate takes num_requests / rate seconds
    tried: list[tuple[float, bool]] = []

    def probe(rate: float) -> bool:
        ok = bool(holds(rate))
        tried.append((rate, ok))
        return ok

    rate = min(start, limit)
    if probe(rate):
        good, bad = rate, None
        while bad is None and good < limit:
            rate = min(good * 2, limit)
            if probe(rate):
                good = rate
            else:
                bad = rate
    else:
        good, bad = None, rate
        while good is None and bad / 2 >= floor:
            rate = bad / 2
            if probe(rate):
                good = rate
            else:
                bad = rate
    if good is None:
        return None, tried
    for _ in range(refine if bad is not None else 0):
        mid = (good + bad) / 2
        if probe(mid):
            good = mid
        else:
            bad = mid
    return good, tried
