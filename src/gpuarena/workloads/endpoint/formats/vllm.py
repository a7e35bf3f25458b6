"""vLLM ``vllm bench serve`` (vllm/benchmarks/serve.py; ``benchmarks/benchmark_serving.py`` before it) and
SGLang ``python -m sglang.bench_serving`` (python/sglang/bench_serving.py) result files.

vLLM writes one JSON object per run (``--save-result``; ``--append-result`` appends one a line):
``backend``, ``model_id``, ``request_rate`` (a number or ``"inf"``), ``max_concurrency``,
``duration`` (s, from before the first request is sent to the last answer), ``completed``,
``failed``, ``total_input_tokens``, ``total_output_tokens``, ``request_throughput``,
``output_throughput`` and ``{mean,median,std,pNN}_{ttft,tpot,itl,e2el}_ms`` for the metrics
``--percentile-metrics`` selects (default ttft, tpot, itl).  ``--save-detailed`` keeps the
per-request lists: ``input_lens``, ``output_lens`` (0 for a failed request), ``ttfts`` (s, 0 for a
failed one), ``itls`` (s, one gap per streamed chunk), ``start_times`` (perf_counter s, current
vLLM), ``generated_texts``, ``errors``; ``latencies`` (s, to the last chunk) is kept in every file
of current vLLM.  SGLang appends one JSONL line per run, the same metric names but
``*_e2e_latency_ms``, and the same lists with ``--output-details`` (no latencies, no start times).

Both define TTFT, TPOT = (latency - TTFT) / (tokens - 1) and ITL per chunk as gpuarena does
(gpuarena's definitions are vLLM's).
"""

from __future__ import annotations

from gpuarena.errors import UserError
from gpuarena.workloads.endpoint import metrics as M
from gpuarena.workloads.endpoint.formats import Parsed, Q, count, error_kind, flat, lens, num, seconds

LISTS = ("input_lens", "output_lens", "ttfts", "itls")
CLOSE_WHY = ("E2E here is TTFT + the chunk gaps (the file keeps no latencies); the tool's latency also counts "
             "the stream's close after the last chunk")


def is_vllm(d: dict) -> bool:
    return ("backend" in d or "endpoint_type" in d) and all(k in d for k in ("duration", "completed")) \
        and any(k.startswith("mean_") and k.endswith("_ms") for k in d)


def is_sglang(d: dict) -> bool:
    return "mean_e2e_latency_ms" in d and "duration" in d


def _records(d: dict, path: str) -> list[M.Record] | None:
    """The per-request lists as records (None when the file has none)."""
    present = [k for k in LISTS if k in d]
    if not present:
        return None
    if len(present) < len(LISTS) or not all(isinstance(d[k], list) for k in LISTS):
        raise UserError(f"{path}: the per-request lists {', '.join(LISTS)} must all be lists "
                        f"(missing or not a list: {', '.join(k for k in LISTS if not isinstance(d.get(k), list))})")
    n = len(d["ttfts"])
    extra = {k: d[k] for k in ("errors", "latencies", "start_times") if d.get(k) is not None}
    for k, v in extra.items():
        if not isinstance(v, list):
            raise UserError(f"{path}: {k} is not a list")
    if any(len(d[k]) != n for k in LISTS) or any(len(v) != n for v in extra.values()):
        raise UserError(f"{path}: the per-request lists ({', '.join([*LISTS, *extra])}) differ in length")
    starts = [seconds(s, path, f"start_times[{i}]") for i, s in enumerate(extra.get("start_times") or [])]
    t0 = min(starts) if starts else 0.0
    out = []
    for i in range(n):
        err = (extra.get("errors") or [""] * n)[i]
        ttft = seconds(d["ttfts"][i] or 0.0, path, f"ttfts[{i}]") if not err else num(d["ttfts"][i]) or 0.0
        gaps = d["itls"][i] or []
        if not isinstance(gaps, list):
            raise UserError(f"{path}: itls[{i}] is not a list of seconds")
        gaps = [seconds(g, path, f"itls[{i}]") for g in gaps]
        o = count(d["output_lens"][i] or 0, path, f"output_lens[{i}]")
        p = count(d["input_lens"][i], path, f"input_lens[{i}]")
        sent = starts[i] - t0 if starts else 0.0
        if err or ttft <= 0:      # a failed request: ttft 0, output 0 and (usually) its error text
            out.append(M.Record(sent=sent, error=error_kind(err) if err else "empty", detail=str(err or "")[:200],
                                prompt_tokens=p))
            continue
        e2e = seconds(extra["latencies"][i], path, f"latencies[{i}]") if "latencies" in extra else ttft + sum(gaps)
        out.append(M.Record(sent=sent, ok=True, ttft=ttft, gaps=gaps, e2e=e2e, prompt_tokens=p, output_tokens=o,
                            tokens_from="tool"))
    return out


def _parse(d: dict, path: str, tool: str, e2e: str) -> Parsed:
    dur = num(d.get("duration"))
    if not dur or dur <= 0:
        raise UserError(f"{path}: duration must be a positive number of seconds")
    recs = _records(d, path)
    has_lat = isinstance(d.get("latencies"), list) and recs is not None
    close = "" if has_lat else "; " + CLOSE_WHY
    cmp = []
    for ours, theirs, why in (("ttft_ms", "ttft", "the same definition (send to the first chunk with text)"),
                              ("tpot_ms", "tpot", "TPOT = (E2E - TTFT) / (tokens - 1) in both" + close),
                              ("itl_ms", "itl", "ITL per streamed chunk in both (a chunk may carry several tokens)"),
                              ("e2e_ms", e2e, "the same definition" + close)):
        for q in ("mean", "median", "p90", "p99"):
            cmp.append((ours, Q[q], num(d.get(f"{q}_{theirs}_ms")), why, True))
    cmp += [("output_tokens_per_s", None, num(d.get("output_throughput")),
             "output tokens of completed requests over the file's duration in both (first send to last answer)", True),
            ("requests_per_s", None, num(d.get("request_throughput")), "completed requests over the same duration",
             True)]
    rate = num(d.get("request_rate"))
    meta = {"model": d.get("model_id") or d.get("model"), "backend": d.get("backend") or d.get("endpoint_type"),
            "rate": rate if rate and 0 < rate < float("inf") else None,
            "concurrency": d.get("max_concurrency"), "num_requests": d.get("num_prompts") or d.get("completed"),
            **lens(d.get("total_input_tokens"), d.get("total_output_tokens"), d.get("completed"))}
    figures = {} if recs else {"duration_s": dur, "completed": d.get("completed"), "failed": d.get("failed"),
                               "output_tokens": d.get("total_output_tokens")}
    notes = [] if recs is not None or "latencies" not in d else \
        ["the file keeps per-request latencies but no TTFTs or chunk gaps (saved without --save-detailed)"]
    return Parsed(tool, dur, meta, flat(d), recs, figures, cmp, notes)


def vllm(d: dict, path: str) -> Parsed:
    return _parse(d, path, "vllm bench serve", "e2el")


def sglang(d: dict, path: str) -> Parsed:
    return _parse(d, path, "sglang bench_serving", "e2e_latency")
