"""Ray LLMPerf ``token_benchmark_ray.py`` result files (src/llmperf/common_metrics.py names the keys).

``{model}_{in}_{out}_summary.json``: the run's metadata (``model``, ``num_concurrent_requests``,
``mean_input_tokens`` ...) and its results flattened with ``_``: ``results_ttft_s_mean``,
``results_ttft_s_quantiles_p50``, ``results_inter_token_latency_s_mean``,
``results_end_to_end_latency_s_*``, ``results_mean_output_throughput_token_per_s``,
``results_num_completed_requests``, ``results_num_completed_requests_per_min``,
``results_number_errors`` ...  Beside it, ``..._individual_responses.json``: a list of requests,
each ``ttft_s``, ``end_to_end_latency_s``, ``inter_token_latency_s``, ``number_input_tokens``,
``number_output_tokens`` (the tokenizer's count of the text), ``error_code`` (None when it
succeeded), ``error_msg`` and, in the launch loop's requests, ``start_time`` (s from the test start).

Where LLMPerf differs from gpuarena: its inter-token latency is a request's time to its last chunk
over all its output tokens (the first token included), not (E2E - TTFT) / (tokens - 1); its
end-to-end latency runs to the stream's close; its throughputs divide by the wall time of its launch
loop (first send to the last result collected).
"""

from __future__ import annotations

from pathlib import Path

from gpuarena.errors import UserError
from gpuarena.workloads.endpoint import metrics as M
from gpuarena.workloads.endpoint.formats import Parsed, count, error_kind, flat, lens, ms, num, seconds, sibling

SUMMARY, RESPONSES = "_summary.json", "_individual_responses.json"
ITL_WHY = ("LLMPerf's inter-token latency is a request's whole time, first token included, over its output "
           "tokens; gpuarena's TPOT leaves the first token out: (E2E - TTFT) / (tokens - 1)")
LOOP_WHY = "LLMPerf divides by its launch loop's wall time (to the last result collected), not to the last answer"
E2E_WHY = "the same field (LLMPerf's end_to_end_latency_s, which runs to the stream's close)"


def is_summary(d: dict) -> bool:
    return "results_ttft_s_mean" in d or ("num_concurrent_requests" in d and any(k.startswith("results_") for k in d))


def is_responses(rows) -> bool:
    return isinstance(rows, list) and bool(rows) and all(
        isinstance(r, dict) and "ttft_s" in r and "end_to_end_latency_s" in r for r in rows)


def summary(d: dict, path: str, rows=None, rows_path: str | None = None) -> Parsed:
    """A summary, with the per-request records of the *_individual_responses.json beside it."""
    def r(k):
        return num(d.get(f"results_{k}"))
    per_min = r("num_completed_requests_per_min")
    done = r("num_completed_requests")
    loop = 60 * done / per_min if per_min and done else None
    same = "the same definition"
    cmp = [("ttft_ms", "mean", ms(r("ttft_s_mean")), same, True),
           ("ttft_ms", "p50", ms(r("ttft_s_quantiles_p50")), same, True),
           ("ttft_ms", "p90", ms(r("ttft_s_quantiles_p90")), same, True),
           ("ttft_ms", "p99", ms(r("ttft_s_quantiles_p99")), same, True),
           ("e2e_ms", "mean", ms(r("end_to_end_latency_s_mean")), E2E_WHY, True),
           ("e2e_ms", "p50", ms(r("end_to_end_latency_s_quantiles_p50")), E2E_WHY, True),
           ("e2e_ms", "p99", ms(r("end_to_end_latency_s_quantiles_p99")), E2E_WHY, True),
           ("tpot_ms", "mean", ms(r("inter_token_latency_s_mean")), ITL_WHY, False),
           ("tpot_ms", "p50", ms(r("inter_token_latency_s_quantiles_p50")), ITL_WHY, False),
           ("output_tokens_per_s", None, r("mean_output_throughput_token_per_s"), LOOP_WHY, False),
           ("requests_per_s", None, per_min / 60 if per_min else None, LOOP_WHY, False)]
    meta = {"model": d.get("model"), "backend": "openai-compatible server", "rate": None,
            "concurrency": d.get("num_concurrent_requests"), "num_requests": d.get("results_num_requests_started"),
            **lens(r("number_input_tokens_mean"), r("number_output_tokens_mean"), 1)}
    if rows is None:
        name = Path(path).name
        found = sibling(path, name[: -len(SUMMARY)] + RESPONSES) if name.endswith(SUMMARY) else None
        rows_path, rows = found if found else (None, None)
    p = Parsed("llmperf", loop, meta, flat(d), None, {}, cmp)
    if rows is not None:
        _attach(p, rows, rows_path or path, loop)
    else:
        p.figures = {"duration_s": loop, "completed": int(done) if done else None,
                     "failed": int(r("number_errors")) if r("number_errors") is not None else None}
    return p


def responses(rows: list, path: str) -> Parsed:
    """An *_individual_responses.json on its own (its summary beside it when there is one)."""
    name = Path(path).name
    found = sibling(path, name[: -len(RESPONSES)] + SUMMARY) if name.endswith(RESPONSES) else None
    if found and isinstance(found[1], dict) and is_summary(found[1]):
        return summary(found[1], path, rows, path)
    p = Parsed("llmperf", None, {"backend": "openai-compatible server"}, {}, None, {}, [])
    _attach(p, rows, path, None)
    return p


def _attach(p: Parsed, rows, path: str, loop: float | None) -> None:
    if not isinstance(rows, list):
        raise UserError(f"{path}: not a list of LLMPerf responses")
    recs = [_record(x, i, path) for i, x in enumerate(rows)]
    starts = [x.get("start_time") for x in rows]
    if recs and all(num(s) is not None for s in starts):
        t0 = min(num(s) for s in starts)
        for rec, s in zip(recs, starts):
            rec.sent = num(s) - t0
        p.duration = None          # first send to the last answer, from the records
    elif loop:
        p.notes.append("throughputs divide by LLMPerf's launch-loop time: its last responses carry no start_time")
    else:
        raise UserError(f"{path}: LLMPerf responses without start_time give no run duration: import the "
                        f"*_summary.json with this file beside it")
    p.records = recs


def _record(x, i: int, path: str) -> M.Record:
    if not isinstance(x, dict):
        raise UserError(f"{path}: response {i} is not a JSON object")
    prompt = x.get("number_input_tokens")
    prompt = count(prompt, path, f"response {i}: number_input_tokens") if prompt is not None else None
    if x.get("error_code") is not None:
        return M.Record(sent=0.0, error=error_kind(x.get("error_msg") or "", x.get("error_code")),
                        detail=str(x.get("error_msg") or x.get("error_code"))[:200], prompt_tokens=prompt)
    ttft = seconds(x.get("ttft_s"), path, f"response {i}: ttft_s")
    e2e = seconds(x.get("end_to_end_latency_s"), path, f"response {i}: end_to_end_latency_s")
    n = count(x.get("number_output_tokens"), path, f"response {i}: number_output_tokens")
    return M.Record(sent=0.0, ok=n > 0, ttft=ttft, e2e=e2e, output_tokens=n, prompt_tokens=prompt,
                    tokens_from="tool", error=None if n > 0 else "empty")
