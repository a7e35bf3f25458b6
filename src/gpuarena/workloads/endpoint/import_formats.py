"""The result files of other serving benchmarks, each read into one shape (``Parsed``).

Every format says which of its figures stands for which of gpuarena's (``compare``: our figure,
its percentile, the tool's value, why the two may differ); importers.py recomputes ours from the
per-request records where the file has them and names each difference.  The formats, as each
tool's source writes them:

- vLLM ``benchmarks/benchmark_serving.py`` / ``vllm bench serve --save-result [--save-detailed]``:
  one JSON object, ``backend``, ``duration``, ``completed``, ``output_throughput``,
  ``{mean,median,std,p99}_{ttft,tpot,itl,e2el}_ms``; detailed: ``input_lens``, ``output_lens``,
  ``ttfts`` (s), ``itls`` (s, a list per request, one gap per chunk), ``errors``.
- SGLang ``python -m sglang.bench_serving --output-file``: JSONL, one object per run, the same
  per-request lists (``--output-details``) and ``mean_e2e_latency_ms``, ``median_ttft_ms`` ...
- Ray LLMPerf ``token_benchmark_ray.py``: ``*_summary.json`` (``results_ttft_s_mean``,
  ``results_inter_token_latency_s_quantiles_p50``, ``results_num_completed_requests_per_min``
  ...) and, beside it, ``*_individual_responses.json`` (``ttft_s``, ``end_to_end_latency_s``,
  ``number_output_tokens``, ``error_code`` per request).  Its inter-token latency is a request's
  whole time, first token included, over its output tokens; its throughputs divide by the wall
  time of its launch loop (first send to the last result collected).
- NVIDIA GenAI-Perf ``profile_export_genai_perf.json`` and AIPerf ``profile_export_aiperf.json``
  (the same metric names at the top level, or, in AIPerf's documented summary, under ``records``
  by tag: ``ttft``, ``inter_token_latency``, ``request_latency`` ...): ``time_to_first_token``,
  ``inter_token_latency``, ``request_latency``, ``output_token_throughput``,
  ``request_throughput``, each ``{unit, avg, p50, p90, p99, ...}``; their inter-token latency is
  (request latency - TTFT) / (output tokens - 1): vLLM's TPOT.
- guidellm ``benchmarks.json``: ``{"benchmarks": [...]}``, each with ``metrics`` of
  ``{successful: {mean, median, percentiles: {p50, p90, p99 ...}}}`` distributions
  (``time_to_first_token_ms``, ``time_per_output_token_ms``, ``inter_token_latency_ms``,
  ``request_latency`` in s, ``requests_per_second``, ``output_tokens_per_second``); its TPOT is
  (last token - request start) / output tokens, first token included, and its ITL is
  (last - first token) / (tokens - 1) per request (gpuarena's TPOT) but weighted by tokens in the
  distribution (guidellm schemas/request_stats.py, generative/metrics.py).
- MLPerf Inference loadgen ``mlperf_log_summary.txt``: ``key : value`` lines (``Scenario``,
  ``Completed samples per second``, ``Completed tokens per second``, ``Mean First Token latency
  (ns)``, ``Mean Time to Output Token (ns)``, ``99.00 percentile latency (ns)`` ...).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from gpuarena import safeio
from gpuarena.errors import UserError
from gpuarena.workloads.endpoint import metrics as M

MAX_BYTES = 256 << 20
Q = {"mean": "mean", "median": "p50", "p50": "p50", "p90": "p90", "p99": "p99"}


@dataclass
class Parsed:
    tool: str
    duration: float | None
    meta: dict                                   # model, backend, rate, concurrency, num_requests
    tool_summary: dict
    records: list[M.Record] | None = None
    figures: dict = field(default_factory=dict)  # the tool's own figures in gpuarena's names (no records)
    # (figure, percentile or None, the tool's value, why they may differ, the same definition as gpuarena's)
    compare: list[tuple] = field(default_factory=list)


def _n(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _lens(prompt, output, n) -> dict:
    """{"prompt_len", "output_len"}: the mean lengths a summary states (totals over n requests), where it does."""
    out = {}
    for k, total in (("prompt_len", prompt), ("output_len", output)):
        if _n(total) and _n(n) and n > 0:
            out[k] = max(1, round(total / n))
    return out


def _flat(d: dict) -> dict:
    return {k: v for k, v in d.items() if not isinstance(v, (list, dict))}


def _lists(d: dict, path: str) -> list[M.Record] | None:
    """vLLM's and SGLang's per-request lists as records (None when the file has none)."""
    keys = ("input_lens", "output_lens", "ttfts", "itls")
    if not all(isinstance(d.get(k), list) for k in keys):
        return None
    n = len(d["ttfts"])
    errors = d.get("errors") if isinstance(d.get("errors"), list) else [""] * n
    if any(len(d[k]) != n for k in keys) or len(errors) != n:
        raise UserError(f"{path}: input_lens, output_lens, ttfts, itls and errors differ in length")
    out = []
    for i in range(n):
        ttft, gaps, o, p, err = d["ttfts"][i], d["itls"][i], d["output_lens"][i], d["input_lens"][i], errors[i]
        if not isinstance(gaps, list) or not all(_n(g) is not None and g >= 0 for g in gaps) \
                or not isinstance(o, int) or not isinstance(p, int) or _n(ttft) is None:
            raise UserError(f"{path}: request {i}: ttfts, itls, input_lens or output_lens is not numbers")
        if err or ttft <= 0:    # a failed request: ttft 0 and its error text
            out.append(M.Record(sent=0.0, error="http_5xx" if err else "empty", detail=str(err)[:200]))
            continue
        out.append(M.Record(sent=0.0, ok=True, ttft=float(ttft), gaps=[float(g) for g in gaps],
                            e2e=float(ttft) + sum(gaps), prompt_tokens=p, output_tokens=o, tokens_from="tool"))
    return out


CLOSE_WHY = "E2E here is TTFT + the chunk gaps; the tool's latency also counts the stream's close after the last chunk"


def _vllm_like(d: dict, path: str, tool: str, e2e: str) -> Parsed:
    dur = _n(d.get("duration"))
    if not dur or dur <= 0:
        raise UserError(f"{path}: duration must be a positive number of seconds")
    cmp = []
    for ours, theirs, why in (("ttft_ms", "ttft", "the same definition (send to the first chunk with text)"),
                              ("tpot_ms", "tpot", "TPOT = (E2E - TTFT) / (tokens - 1) in both; " + CLOSE_WHY),
                              ("itl_ms", "itl", "ITL per streamed chunk in both (a chunk may carry several tokens)"),
                              ("e2e_ms", e2e, CLOSE_WHY)):
        for q in ("mean", "median", "p99"):
            cmp.append((ours, Q[q], _n(d.get(f"{q}_{theirs}_ms")), why, True))
    cmp += [("output_tokens_per_s", None, _n(d.get("output_throughput")),
             "output tokens of completed requests over the file's duration in both (first send to last answer)", True),
            ("requests_per_s", None, _n(d.get("request_throughput")), "completed requests over the same duration",
             True)]
    rate = d.get("request_rate")
    meta = {"model": d.get("model_id") or d.get("model"), "backend": d.get("backend"),
            "rate": None if rate in (None, "inf") or _n(rate) in (None, float("inf")) or _n(rate) <= 0 else _n(rate),
            "concurrency": d.get("max_concurrency"), "num_requests": d.get("num_prompts") or d.get("completed"),
            **_lens(d.get("total_input_tokens"), d.get("total_output_tokens"), d.get("completed"))}
    recs = _lists(d, path)
    figures = {} if recs else {"duration_s": dur, "completed": d.get("completed"),
                               "output_tokens": d.get("total_output_tokens")}
    return Parsed(tool, dur, meta, _flat(d), recs, figures, cmp)


def vllm(d: dict, path: str) -> Parsed:
    return _vllm_like(d, path, "vllm bench serve", "e2el")


def sglang(d: dict, path: str) -> Parsed:
    return _vllm_like(d, path, "sglang bench_serving", "e2e_latency")


def llmperf(d: dict, path: str) -> Parsed:
    """A summary, with the per-request records of the *_individual_responses.json beside it."""
    def r(k):
        return _n(d.get(f"results_{k}"))
    per_min = r("num_completed_requests_per_min")
    done = r("num_completed_requests")
    dur = 60 * done / per_min if per_min and done else None
    itl_why = ("LLMPerf's inter-token latency is a request's whole time, first token included, over its output "
               "tokens; gpuarena's TPOT leaves the first token out: (E2E - TTFT) / (tokens - 1)")
    loop_why = "LLMPerf divides by its launch loop's wall time (to the last result collected), not to the last answer"
    same = "the same definition"
    cmp = [("ttft_ms", "mean", _ms(r("ttft_s_mean")), same, True),
           ("ttft_ms", "p50", _ms(r("ttft_s_quantiles_p50")), same, True),
           ("ttft_ms", "p99", _ms(r("ttft_s_quantiles_p99")), same, True),
           ("e2e_ms", "mean", _ms(r("end_to_end_latency_s_mean")), same, True),
           ("tpot_ms", "mean", _ms(r("inter_token_latency_s_mean")), itl_why, False),
           ("tpot_ms", "p50", _ms(r("inter_token_latency_s_quantiles_p50")), itl_why, False),
           ("output_tokens_per_s", None, r("mean_output_throughput_token_per_s"), loop_why, False),
           ("requests_per_s", None, per_min / 60 if per_min else None, loop_why, False)]
    meta = {"model": d.get("model"), "backend": "openai-compatible server", "rate": None,
            "concurrency": d.get("num_concurrent_requests"), "num_requests": d.get("results_num_requests_started"),
            **_lens(r("number_input_tokens_mean"), r("number_output_tokens_mean"), 1)}
    recs = None
    sibling = Path(path).with_name(Path(path).name.replace("_summary.json", "_individual_responses.json"))
    if sibling.name != Path(path).name and sibling.exists():
        rows = json.loads(safeio.read_text(str(sibling), str(sibling), MAX_BYTES))
        recs = [_llmperf_record(x, i, str(sibling)) for i, x in enumerate(rows if isinstance(rows, list) else [])]
    figures = {} if recs else {"duration_s": dur, "completed": int(done) if done else None}
    return Parsed("llmperf", dur, meta, _flat(d), recs or None, figures, cmp)


def _ms(x):
    return None if x is None else x * 1e3


def _llmperf_record(x, i: int, path: str) -> M.Record:
    if not isinstance(x, dict):
        raise UserError(f"{path}: response {i} is not a JSON object")
    if x.get("error_code") is not None:
        return M.Record(sent=0.0, error="http_5xx" if str(x.get("error_code")).startswith("5") else "http_4xx",
                        detail=str(x.get("error_msg") or "")[:200])
    ttft, e2e, n = _n(x.get("ttft_s")), _n(x.get("end_to_end_latency_s")), x.get("number_output_tokens")
    if ttft is None or e2e is None or not isinstance(n, int):
        raise UserError(f"{path}: response {i}: ttft_s, end_to_end_latency_s or number_output_tokens is missing")
    return M.Record(sent=_n(x.get("start_time")) or 0.0, ok=n > 0, ttft=ttft, e2e=e2e, output_tokens=n,
                    prompt_tokens=x.get("number_input_tokens"), tokens_from="tool",
                    error=None if n > 0 else "empty")


AIPERF_TAGS = {"ttft": "time_to_first_token", "inter_token_latency": "inter_token_latency",
               "request_latency": "request_latency", "output_token_throughput": "output_token_throughput",
               "request_throughput": "request_throughput"}


def aiperf(d: dict, path: str) -> Parsed:
    """AIPerf's summary with its metrics under ``records`` by tag: read as GenAI-Perf's names."""
    recs = d["records"]
    flat = {AIPERF_TAGS.get(k, k): v for k, v in recs.items() if isinstance(v, dict)}
    p = genai_perf({**flat, "input_config": d.get("input_config") or {}}, path)
    p.tool = "aiperf"
    return p


def genai_perf(d: dict, path: str) -> Parsed:
    def stat(k, q):
        v = d.get(k)
        return _n(v.get(q)) if isinstance(v, dict) else None

    itl_why = "GenAI-Perf's inter-token latency is (latency - TTFT) / (tokens - 1): gpuarena's (and vLLM's) TPOT"
    cmp = [(ours, "mean" if q == "avg" else q, stat(k, q), why, True) for ours, k, why in (
        ("ttft_ms", "time_to_first_token", "the same definition"), ("tpot_ms", "inter_token_latency", itl_why),
        ("e2e_ms", "request_latency", "the same definition")) for q in ("avg", "p50", "p90", "p99")]
    cmp += [("output_tokens_per_s", None, stat("output_token_throughput", "avg"), "the same definition", True),
            ("requests_per_s", None, stat("request_throughput", "avg"), "the same definition", True)]
    cfg = d.get("input_config") if isinstance(d.get("input_config"), dict) else {}
    models = cfg.get("model") or cfg.get("model_names")
    meta = {"model": models[0] if isinstance(models, list) and models else models if isinstance(models, str) else None,
            "backend": "openai-compatible server", "rate": _n(cfg.get("request_rate")),
            "concurrency": cfg.get("concurrency"), "num_requests": None,
            **_lens(stat("input_sequence_length", "avg"), stat("output_sequence_length", "avg"), 1)}
    return Parsed("genai-perf", None, meta, _flat({k: v.get("avg") for k, v in d.items()
                                                   if isinstance(v, dict) and "avg" in v}), None, {}, cmp)


def guidellm(b: dict, path: str) -> Parsed:
    """One benchmark of a guidellm benchmarks.json."""
    m = b.get("metrics") if isinstance(b.get("metrics"), dict) else {}

    def stat(k, q, scale=1.0):
        ok = (m.get(k) or {}).get("successful") if isinstance(m.get(k), dict) else None
        if not isinstance(ok, dict):
            return None
        v = ok.get(q) if q in ("mean", "median") else (ok.get("percentiles") or {}).get(q)
        return None if _n(v) is None else _n(v) * scale

    tpot_why = "guidellm's TPOT is (last token - request start) / tokens: the first token included"
    itl_why = ("guidellm's ITL is gpuarena's TPOT per request, but its distribution weighs each request by its "
               "tokens")
    cmp = [("ttft_ms", Q[q], stat("time_to_first_token_ms", q), "the same definition", True)
           for q in ("mean", "median", "p90", "p99")]
    cmp += [("e2e_ms", Q[q], stat("request_latency", q, 1e3), "the same definition", True) for q in ("mean", "p99")]
    cmp += [("tpot_ms", Q[q], stat("time_per_output_token_ms", q), tpot_why, False) for q in ("mean", "median")]
    cmp += [("tpot_ms", Q[q], stat("inter_token_latency_ms", q), itl_why, False) for q in ("mean", "median")]
    cmp += [("output_tokens_per_s", None, stat("output_tokens_per_second", "mean"),
             "guidellm's mean output tokens/s over its measured window", True),
            ("requests_per_s", None, stat("requests_per_second", "mean"),
             "guidellm's mean requests/s over its measured window", True)]
    args = b.get("config") or b.get("args") or {}
    strat = args.get("strategy") if isinstance(args, dict) and isinstance(args.get("strategy"), dict) else {}
    totals = m.get("request_totals") if isinstance(m.get("request_totals"), dict) else {}
    meta = {"model": (b.get("worker") or {}).get("backend_model") if isinstance(b.get("worker"), dict) else None,
            "backend": f"guidellm {strat.get('type_', '?')} strategy", "rate": _n(strat.get("rate")),
            "concurrency": strat.get("streams"), "num_requests": totals.get("total"),
            **_lens(stat("prompt_token_count", "mean"), stat("output_token_count", "mean"), 1)}
    summary = {f"{k}_{q}": stat(k, q) for k in m if isinstance(m[k], dict) for q in ("mean", "median", "p99")
               if stat(k, q) is not None}
    figures = {"completed": totals.get("successful"), "failed": totals.get("errored")}
    return Parsed("guidellm", None, meta, summary, None, figures, cmp)


MLPERF_LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.+?)\s*$")


def mlperf(text: str, path: str) -> Parsed:
    kv = {m.group(1): m.group(2) for m in map(MLPERF_LINE.match, text.splitlines()) if m}

    def ns(k):
        x = _n(_float(kv.get(k)))
        return None if x is None else x / 1e6

    tpot_why = ("loadgen's time to output token, kept as loadgen's: the summary has no per-request records "
                "to recompute gpuarena's TPOT from")
    same = "the same definition"
    cmp = [("ttft_ms", "mean", ns("Mean First Token latency (ns)"), same, True),
           ("ttft_ms", "p99", ns("99.00 percentile first token latency (ns)"), same, True),
           ("tpot_ms", "mean", ns("Mean Time to Output Token (ns)"), tpot_why, False),
           ("tpot_ms", "p99", ns("99.00 percentile time to output token (ns)"), tpot_why, False),
           ("e2e_ms", "mean", ns("Mean latency (ns)"), same, True),
           ("e2e_ms", "p99", ns("99.00 percentile latency (ns)"), same, True),
           ("output_tokens_per_s", None, _float(kv.get("Completed tokens per second")), same, True),
           ("requests_per_s", None, _float(kv.get("Completed samples per second")), "a sample is a request", True)]
    meta = {"model": kv.get("SUT name"), "backend": f"MLPerf loadgen {kv.get('Scenario', '?')} scenario",
            "rate": _float(kv.get("Scheduled samples per second")), "concurrency": None, "num_requests": None}
    summary = {k: v for k, v in kv.items() if len(k) < 80}
    return Parsed("mlperf loadgen", None, meta, summary, None, {}, cmp)


def _float(x):
    try:
        return float(str(x).split()[0])
    except (TypeError, ValueError, IndexError):
        return None
