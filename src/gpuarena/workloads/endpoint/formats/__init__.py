"""Other serving benchmarks' result files, each read into one shape (``Parsed``).

One module per tool, each written from that tool's own writer code (tests/workloads/fixtures/README.md
names the source files and commits read):

- vllm.py: ``vllm bench serve`` / ``benchmarks/benchmark_serving.py`` result JSON (``--save-result``,
  ``--save-detailed``, ``--append-result`` JSONL) and SGLang ``bench_serving`` JSONL (``--output-details``);
- llmperf.py: Ray LLMPerf ``*_summary.json`` and ``*_individual_responses.json``;
- nvidia.py: AIPerf ``profile_export_aiperf.json`` (both its layouts) and ``profile_export.jsonl``,
  GenAI-Perf ``profile_export_genai_perf.json`` and perf_analyzer's ``profile_export.json``;
- guidellm.py: guidellm ``benchmarks.json`` (summaries and the per-request records it keeps);
- mlperf.py: MLPerf Inference loadgen ``mlperf_log_summary.txt``.

Every format says which of its figures stands for which of gpuarena's (``compare``: our figure, its
percentile, the tool's value, why the two may differ, whether the definition is gpuarena's);
importers.py recomputes ours from the per-request records where the file has them and names each
difference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from gpuarena import safeio
from gpuarena.errors import UserError
from gpuarena.workloads.endpoint import metrics as M

MAX_BYTES = 256 << 20
Q = {"mean": "mean", "avg": "mean", "median": "p50", "p50": "p50", "p90": "p90", "p99": "p99"}
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "seconds": 1.0}


@dataclass
class Parsed:
    tool: str
    duration: float | None                       # seconds the throughputs divide by (None: from the records)
    meta: dict                                   # model, backend, rate, concurrency, num_requests
    tool_summary: dict
    records: list[M.Record] | None = None
    figures: dict = field(default_factory=dict)  # the tool's own figures in gpuarena's names (no records)
    # (figure, percentile or None, the tool's value, why they may differ, the same definition as gpuarena's)
    compare: list[tuple] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # what a reader of the result should know about the file
    sampled: bool = False                        # the records are a sample: throughputs stay the tool's


def num(x) -> float | None:
    """A JSON number as a float (None for anything else, booleans included)."""
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def seconds(x, path: str, what: str, scale: float = 1.0) -> float:
    """A finite, non-negative time in seconds; a one-line UserError naming the file otherwise."""
    v = num(x)
    if v is None or not math.isfinite(v) or v < 0:
        raise UserError(f"{path}: {what} is not a non-negative number (got {str(x)[:40]!r})")
    return v * scale


def count(x, path: str, what: str) -> int:
    if not isinstance(x, int) or isinstance(x, bool) or x < 0:
        if isinstance(x, float) and x.is_integer() and x >= 0:
            return int(x)
        raise UserError(f"{path}: {what} is not a whole number of tokens (got {str(x)[:40]!r})")
    return x


def lens(prompt, output, n) -> dict:
    """{"prompt_len", "output_len"}: the mean lengths a summary states (totals over n requests), where it does."""
    out = {}
    for k, total in (("prompt_len", prompt), ("output_len", output)):
        if num(total) and num(n) and n > 0 and math.isfinite(total):
            out[k] = max(1, round(total / n))
    return out


def flat(d: dict) -> dict:
    """The scalar entries of a summary, non-finite numbers as text (JSON has no Infinity)."""
    return {k: (v if not isinstance(v, float) or math.isfinite(v) else str(v)) for k, v in d.items()
            if not isinstance(v, (list, dict))}


def ms(x):
    return None if x is None else x * 1e3


def pick(d, *keys):
    """The first of several keys present (not None) in a dict."""
    if isinstance(d, dict):
        for k in keys:
            if d.get(k) is not None:
                return d[k]
    return None


def find_key(d, keys: tuple, depth: int = 0):
    """The first value under any of ``keys`` anywhere in nested dicts (configs move between versions)."""
    if not isinstance(d, dict) or depth > 6:
        return None
    for k in keys:
        if d.get(k) is not None and not isinstance(d.get(k), dict):
            return d[k]
    for v in d.values():
        found = find_key(v, keys, depth + 1)
        if found is not None:
            return found
    return None


def sibling(path: str, name: str):
    """(path, JSON) of a file beside ``path``, or None when there is none; bad JSON is a UserError."""
    import json

    p = Path(path).with_name(name)
    if p.name == Path(path).name or not p.is_file():
        return None
    text = safeio.read_text(str(p), str(p), MAX_BYTES)
    try:
        return str(p), json.loads(text)
    except (ValueError, RecursionError):
        raise UserError(f"{p}: not valid JSON (read beside {Path(path).name})") from None


def error_kind(text: str, code=None) -> str:
    """One of metrics.ERROR_KINDS for a tool's error text or status code."""
    c = num(code)
    if c is not None and 400 <= c < 500 and c != 499:
        return "http_4xx"
    if c is not None and 500 <= c < 600:
        return "http_5xx"
    t = str(text).lower()
    if c == 499 or "cancel" in t:
        return "stream_cut"
    if "timeout" in t or "timed out" in t:
        return "timeout"
    if "cannot connect" in t or "connection refused" in t or "connecterror" in t or "name or service" in t:
        return "connect"
    if "disconnect" in t or "payload" in t or "incomplete" in t:
        return "stream_cut"
    for n in range(400, 600):
        if str(n) in t:
            return "http_4xx" if n < 500 else "http_5xx"
    return "stream_error"
