"""guidellm ``benchmarks.json`` (vllm-project/guidellm: benchmark/schemas/generative/{benchmark,metrics}.py,
schemas/request_stats.py): ``{"metadata", "args", "benchmarks": [...]}``, one benchmark per strategy
run, each with ``config`` (``strategy``: ``type_``, ``streams``, ``rate``; ``backend``),
``metrics`` (per figure a distribution by status, ``{"successful": {"mean", "median",
"percentiles": {"p50", "p90", "p99" ...}}, "errored", "incomplete", "total"}``, and
``request_totals``) and ``requests``: ``{"successful": [...], "incomplete": [...], "errored":
[...]}``, the per-request stats (a sample when ``--sample-requests`` is set): timings in
``info.timings`` (``request_start``, ``first_token_iteration``, ``last_token_iteration``,
``request_end``, epoch s; guidellm 0.3 wrote ``start_time``, ``first_token_time``,
``last_token_time``, ``end_time`` on the request), ``output_tokens``, ``prompt_tokens`` and the
computed ``time_to_first_token_ms`` ...

Where guidellm differs from gpuarena: its TPOT is (last token - request start) / tokens, the first
token included; its ITL is (last - first token) / (tokens - 1) per request, gpuarena's TPOT, but its
distributions weigh each request by its tokens; its request latency runs to the end of the HTTP
response, not to the last token; its rates are means over its measured window (warmup and cooldown
left out); it keeps no per-chunk times, so gpuarena's ITL cannot be rebuilt from its records.
"""

from __future__ import annotations

from gpuarena.errors import UserError
from gpuarena.workloads.endpoint import metrics as M
from gpuarena.workloads.endpoint.formats import Parsed, Q, count, error_kind, find_key, lens, num, pick, seconds

TPOT_WHY = "guidellm's TPOT is (last token - request start) / tokens: the first token included"
ITL_WHY = ("guidellm's ITL is gpuarena's TPOT per request ((last - first token) / (tokens - 1)), but its "
           "distribution weighs each request by its tokens")
E2E_WHY = "guidellm's request latency runs to the end of the HTTP response, gpuarena's E2E to the last token"
RATE_WHY = "guidellm's mean rate over its measured window (warmup and cooldown left out)"


def is_benchmarks(d: dict) -> bool:
    return isinstance(d.get("benchmarks"), list) and bool(d["benchmarks"]) and all(
        isinstance(b, dict) and isinstance(b.get("metrics"), dict) for b in d["benchmarks"])


def benchmark(b: dict, path: str, report: dict | None = None, index: int = 0) -> Parsed:
    """One benchmark of a guidellm benchmarks.json."""
    m = b["metrics"]

    def stat(k, q, scale=1.0):
        ok = m[k].get("successful") if isinstance(m.get(k), dict) else None
        if not isinstance(ok, dict):
            return None
        v = ok.get(q) if q in ("mean", "median") else (ok.get("percentiles") or {}).get(q)
        if v is not None and num(v) is None:
            raise UserError(f"{path}: benchmark {index}: metrics.{k}.successful.{q} is not a number")
        return None if v is None else num(v) * scale

    cmp = [("ttft_ms", Q[q], stat("time_to_first_token_ms", q), "the same definition", True)
           for q in ("mean", "median", "p90", "p99")]
    cmp += [("e2e_ms", Q[q], stat("request_latency", q, 1e3), E2E_WHY, False) for q in ("mean", "median", "p99")]
    cmp += [("tpot_ms", Q[q], stat("time_per_output_token_ms", q), TPOT_WHY, False) for q in ("mean", "median")]
    cmp += [("tpot_ms", Q[q], stat("inter_token_latency_ms", q), ITL_WHY, False) for q in ("mean", "median")]
    cmp += [("output_tokens_per_s", None, stat("output_tokens_per_second", "mean"), RATE_WHY, True),
            ("requests_per_s", None, stat("requests_per_second", "mean"), RATE_WHY, True)]
    cfg = b.get("config") if isinstance(b.get("config"), dict) else b.get("args") if isinstance(b.get("args"),
                                                                                                   dict) else {}
    strat = cfg.get("strategy") if isinstance(cfg.get("strategy"), dict) else {}
    totals = m.get("request_totals") if isinstance(m.get("request_totals"), dict) else {}
    worker = b.get("worker") if isinstance(b.get("worker"), dict) else {}
    model = pick(worker, "backend_model") or find_key(cfg.get("backend"), ("model",)) or \
        find_key((report or {}).get("args"), ("model",))
    streams = strat.get("streams") if isinstance(strat.get("streams"), int) else strat.get("max_concurrency")
    meta = {"model": model if isinstance(model, str) else None,
            "backend": f"guidellm {strat.get('type_', '?')} strategy", "rate": num(strat.get("rate")),
            "concurrency": streams, "num_requests": totals.get("total"),
            **lens(stat("prompt_token_count", "mean"), stat("output_token_count", "mean"), 1)}
    summary = {f"{k}_{q}": stat(k, q) for k in m if isinstance(m[k], dict) for q in ("mean", "median", "p99")
               if stat(k, q) is not None}
    figures = {"requests": totals.get("total"), "completed": totals.get("successful"), "failed": totals.get("errored")}
    p = Parsed("guidellm", None, meta, summary, None, figures, cmp)
    reqs = b.get("requests")
    if isinstance(reqs, dict) and isinstance(reqs.get("successful"), list) and reqs["successful"]:
        _attach(p, reqs, totals, path, index)
    return p


def _attach(p: Parsed, reqs: dict, totals: dict, path: str, index: int) -> None:
    recs, starts = [], []
    for status in ("successful", "errored"):
        rows = reqs.get(status) or []
        if not isinstance(rows, list):
            raise UserError(f"{path}: benchmark {index}: requests.{status} is not a list")
        for i, r in enumerate(rows):
            rec, start = _record(r, status, path, f"benchmark {index} requests.{status}[{i}]")
            recs.append(rec)
            starts.append(start)
    t0 = min(s for s in starts if s is not None)
    for r, s in zip(recs, starts):
        r.sent = s - t0 if s is not None else 0.0
    p.records = recs
    done = totals.get("successful")
    kept = len(reqs["successful"])
    if isinstance(done, int) and done > kept:
        p.sampled = True
        p.notes.append(f"the file keeps {kept} of {done} successful requests (guidellm samples them): latencies "
                       f"are recomputed from the sample, throughputs are guidellm's")
    if isinstance(reqs.get("incomplete"), list) and reqs["incomplete"]:
        p.notes.append(f"{len(reqs['incomplete'])} request(s) still running when guidellm's benchmark ended "
                       f"(incomplete) are left out")
    p.notes.append("no per-chunk times in guidellm's records (first and last token only): gpuarena's ITL is not "
                   "recomputed")


def _record(r, status: str, path: str, where: str) -> tuple[M.Record, float | None]:
    if not isinstance(r, dict):
        raise UserError(f"{path}: {where} is not an object")
    info = r.get("info") if isinstance(r.get("info"), dict) else {}
    t = info.get("timings") if isinstance(info.get("timings"), dict) else {}
    start = pick(t, "request_start", "resolve_start")
    start = start if start is not None else pick(r, "request_start_time", "start_time")
    if status != "successful" and num(start) is None:
        start = None                             # failed before it was sent
    else:
        start = seconds(start, path, f"{where}: request start time")
    first = pick(t, "first_token_iteration", "first_iteration") or r.get("first_token_time")
    last = pick(t, "last_token_iteration", "last_iteration") or r.get("last_token_time")
    end = pick(t, "request_end", "resolve_end")
    end = end if end is not None else pick(r, "request_end_time", "end_time")
    out_m = r.get("output_metrics") if isinstance(r.get("output_metrics"), dict) else {}
    in_m = r.get("input_metrics") if isinstance(r.get("input_metrics"), dict) else {}
    n = pick(r, "output_tokens")
    n = n if n is not None else pick(out_m, "total_tokens", "text_tokens")
    prompt = pick(r, "prompt_tokens")
    prompt = prompt if prompt is not None else pick(in_m, "total_tokens", "text_tokens")
    prompt = count(prompt, path, f"{where}: prompt_tokens") if prompt is not None else None
    if status != "successful":
        err = info.get("error") or r.get("error") or "errored"
        return M.Record(sent=0.0, error=error_kind(str(err)), detail=str(err)[:200], prompt_tokens=prompt), start
    n = count(n if n is not None else t.get("token_iterations"), path, f"{where}: output_tokens")
    stop = last if last is not None else end
    if stop is None:
        raise UserError(f"{path}: {where}: neither a last token time nor a request end time")
    ttft = seconds(first, path, f"{where}: first token time") - start if first is not None else None
    e2e = seconds(stop, path, f"{where}: last token time") - start
    if e2e < 0 or (ttft is not None and (ttft < 0 or ttft > e2e)):
        raise UserError(f"{path}: {where}: its token times are not after its start")
    return M.Record(sent=0.0, ok=n > 0, ttft=ttft, e2e=e2e, prompt_tokens=prompt, output_tokens=n,
                    tokens_from="tool", error=None if n > 0 else "empty"), start
