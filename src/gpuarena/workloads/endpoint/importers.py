"""Other serving benchmarks' result files, recognised by content and stored as endpoint-serve results.

`gpuarena import FILE` reads a gpuarena bundle, or one of these (``recognise`` names the tool):

- ``vllm bench serve`` / ``benchmarks/benchmark_serving.py`` ``--save-result`` JSON (vLLM's
  ``save_to_pytorch_benchmark_format``'s sibling: top-level ``backend``, ``duration``,
  ``completed``, ``output_throughput``, ``mean_ttft_ms`` ...; with ``--save-detailed`` the
  per-request ``input_lens``, ``output_lens``, ``ttfts`` (s), ``itls`` (s, one list per request,
  one gap per streamed chunk) and ``errors``).

Where a file has per-request records, every figure is recomputed from them with gpuarena's
definitions (workloads/endpoint/metrics.py: vLLM's own) and the tool's summary is kept beside
(``extra.tool_summary``); each figure that differs by more than 1 % gets a line saying why
(``extra.tool_differences``): for vLLM's file a request's E2E is rebuilt as TTFT plus its chunk
gaps (vLLM's own latency also counts the close of the stream after the last chunk), and the
duration is the file's (first send to last answer, the same as gpuarena's).  A file without
per-request records stores the tool's summary as it is and says so.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from gpuarena import safeio
from gpuarena.errors import UserError
from gpuarena.workloads.endpoint import metrics as M

MAX_BYTES = 256 << 20
VLLM_KEYS = ("backend", "duration", "completed", "total_output_tokens", "output_throughput", "mean_ttft_ms")
CLOSE = 0.01          # figures within 1 % agree


def read(path: str):
    """The parsed JSON object of a file that may be a serving tool's result; None for anything the
    bundle reader should judge (a bundle, a file that is not a JSON object: it says why)."""
    try:
        data = json.loads(safeio.read_text(path, path, MAX_BYTES))
    except (UserError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or "format" in data:
        return None
    return data


def recognise(data, path: str) -> str:
    """The tool that wrote the data (a UserError when it is none gpuarena reads)."""
    if isinstance(data, dict) and all(k in data for k in VLLM_KEYS):
        return "vllm bench serve"
    raise UserError(f"{path}: not a gpuarena bundle (expected \"format\": \"gpuarena-bundle\") nor a result "
                    "file gpuarena recognises (vllm bench serve / benchmark_serving.py --save-result JSON)")


def _num(d: dict, k: str, path: str, ok=lambda x: x >= 0):
    x = d.get(k)
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not ok(x):
        raise UserError(f"{path}: {k} must be a number >= 0, got {str(x)[:40]!r}")
    return float(x)


def _vllm_records(d: dict, path: str) -> list[M.Record] | None:
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
        if not isinstance(gaps, list) or not all(isinstance(g, (int, float)) and g >= 0 for g in gaps) \
                or not isinstance(o, int) or not isinstance(p, int) or not isinstance(ttft, (int, float)):
            raise UserError(f"{path}: request {i}: ttfts, itls, input_lens or output_lens is not numbers")
        if err or ttft <= 0:    # vLLM keeps a failed request with ttft 0 and its error text
            out.append(M.Record(sent=0.0, error="http_5xx" if err else "empty", detail=str(err)[:200]))
            continue
        out.append(M.Record(sent=0.0, ok=True, ttft=float(ttft), gaps=[float(g) for g in gaps],
                            e2e=float(ttft) + sum(gaps), prompt_tokens=p, output_tokens=o, tokens_from="tool"))
    return out


TOOL_FIGURES = {   # our figure -> (the vLLM key, why the two may differ)
    ("ttft_ms", "mean"): ("mean_ttft_ms", "the same definition (send to first chunk with text)"),
    ("ttft_ms", "p50"): ("median_ttft_ms", "the same definition"),
    ("ttft_ms", "p99"): ("p99_ttft_ms", "the same definition"),
    ("tpot_ms", "mean"): ("mean_tpot_ms", "TPOT = (E2E - TTFT) / (tokens - 1) in both; E2E here is TTFT + the chunk "
                                          "gaps, vLLM's latency also counts the stream's close after the last chunk"),
    ("tpot_ms", "p50"): ("median_tpot_ms", "as mean TPOT"),
    ("tpot_ms", "p99"): ("p99_tpot_ms", "as mean TPOT"),
    ("itl_ms", "mean"): ("mean_itl_ms", "ITL per streamed chunk in both (a chunk may carry several tokens)"),
    ("itl_ms", "p50"): ("median_itl_ms", "as mean ITL"),
    ("itl_ms", "p99"): ("p99_itl_ms", "as mean ITL"),
    ("e2e_ms", "mean"): ("mean_e2el_ms", "E2E here is TTFT + the chunk gaps; vLLM's also counts the stream's close"),
    ("e2e_ms", "p99"): ("p99_e2el_ms", "as mean E2E"),
    ("output_tokens_per_s", None): ("output_throughput", "output tokens of completed requests over the file's "
                                                         "duration in both (first send to last answer)"),
    ("requests_per_s", None): ("request_throughput", "completed requests over the same duration"),
}


def differences(ours: dict, tool: dict) -> list[str]:
    """One line per figure where the recomputed value and the tool's differ by more than 1 %."""
    out = []
    for (fig, q), (key, why) in TOOL_FIGURES.items():
        mine = (ours.get(fig) or {}).get(q) if q else ours.get(fig)
        theirs = tool.get(key)
        if not isinstance(mine, (int, float)) or not isinstance(theirs, (int, float)) or isinstance(theirs, bool):
            continue
        if abs(mine - theirs) > CLOSE * max(abs(theirs), 1e-12):
            name = f"{fig} {q}" if q else fig
            out.append(f"{name}: recomputed {mine:.4g}, the tool's {key} {theirs:.4g}; {why}")
    return out


def to_result(data: dict, tool: str, path: str, gpu: str, params: dict) -> dict:
    """The file as one endpoint-serve result (the dict a bundle carries)."""
    from gpuarena.workloads import registry

    d = data
    duration = _num(d, "duration", path, lambda x: x > 0)
    recs = _vllm_records(d, path)
    wl = registry.get("endpoint-serve")
    rate = d.get("request_rate")
    conc = d.get("max_concurrency")
    given = {"model": str(d.get("model_id") or "")[:200], "engine": f"{d.get('backend')} (via {tool})"[:200],
             "rate": "inf" if rate in (None, "inf", float("inf")) else str(rate),
             "concurrency": conc if isinstance(conc, int) and conc > 0 else 0,
             "num_requests": int(d.get("num_prompts") or max(1, int(_num(d, "completed", path)))), **params}
    tool_summary = {k: v for k, v in d.items() if not isinstance(v, (list, dict))}
    if recs:
        ok = [r for r in recs if r.ok]
        if ok:
            given.setdefault("prompt_len", max(1, round(sum(r.prompt_tokens for r in ok) / len(ok))))
            given.setdefault("output_len", max(1, round(sum(r.output_tokens for r in ok) / len(ok))))
    p = wl.resolve_params(given)
    if recs:
        figures = M.summarize(recs, duration, p["slo_ttft_ms"], p["slo_tpot_ms"])
        diffs = differences(figures, d)
        figures["request_records"] = [r.to_dict() for r in recs]
        how = "recomputed from the file's per-request records"
    else:
        figures = {"duration_s": duration, "completed": int(_num(d, "completed", path)),
                   "output_tokens": int(_num(d, "total_output_tokens", path)),
                   "output_tokens_per_s": _num(d, "output_throughput", path),
                   "requests_per_s": d.get("request_throughput"),
                   **{f: {q: float(d[k]) for (f2, q), (k, _) in TOOL_FIGURES.items()
                          if f2 == f and q and isinstance(d.get(k), (int, float))}
                      for f in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")}}
        diffs = []
        how = "the tool's own summary (the file has no per-request records: run it with --save-detailed)"
    digest = hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:32]
    extra = {"engine": p["engine"], "model": p["model"] or None, "api": p["api"], "server_gpus": p["server_gpus"],
             "rate_requests_per_s": None if p["rate"] == "inf" else float(p["rate"]),
             "concurrency": p["concurrency"] or None, **figures,
             "metrics_definition": "vLLM benchmarks/benchmark_serving.py calculate_metrics",
             "imported_from": {"tool": tool, "file": Path(path).name, "figures": how},
             "tool_summary": tool_summary, "tool_differences": diffs}
    tps = extra.get("output_tokens_per_s")
    return {"id": 1, "uid": f"serving:{digest}", "run_id": "imported", "case_key": f"endpoint-serve/{tool}/{digest}",
            "source": "measured", "workload": "endpoint-serve", "workload_version": wl.version, "variant": "seed",
            "params": p, "size": "full", "gpus": p["server_gpus"], "device": "cuda", "device_name": gpu,
            "status": "ok", "unit": wl.unit_name(p), "precision": "n/a", "throughput_median": tps,
            "items_per_step": extra.get("output_tokens"), "warnings": diffs[:20], "extra": extra,
            "created_at": str(d.get("date") or "")[:40] or None}
