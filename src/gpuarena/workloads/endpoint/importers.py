"""Other serving benchmarks' result files, recognised by content and stored as endpoint-serve results.

`gpuarena import FILE` reads a gpuarena bundle or one of import_formats.py's files (vllm bench
serve, SGLang bench_serving, LLMPerf, GenAI-Perf/AIPerf, guidellm, MLPerf loadgen).  Where a file has
per-request records, every figure is recomputed from them with gpuarena's definitions
(workloads/endpoint/metrics.py: vLLM's own) and the tool's summary kept beside
(``extra.tool_summary``); each figure that differs from the tool's by more than 1 % gets a line
saying why (``extra.tool_differences``, also the result's warnings).  A file without records
stores the tool's figures that share gpuarena's definition, and lists the others with why they
are not gpuarena's (``extra.tool_not_comparable``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from gpuarena import safeio
from gpuarena.errors import UserError
from gpuarena.workloads.endpoint import import_formats as F
from gpuarena.workloads.endpoint import metrics as M

CLOSE = 0.01          # figures within 1 % agree
KNOWN = "vllm bench serve, SGLang bench_serving, LLMPerf *_summary.json, GenAI-Perf/AIPerf profile_export, " \
        "guidellm benchmarks.json, MLPerf loadgen mlperf_log_summary.txt"


def read(path: str):
    """[(tool, its data)] for a serving tool's file; None for what the bundle reader should judge."""
    try:
        text = safeio.read_text(path, path, F.MAX_BYTES)
    except UserError:
        return None
    if "Completed samples per second" in text or ("SUT name" in text and "Scenario" in text):
        return [("mlperf", text)]
    try:
        data = json.loads(text)
    except RecursionError:
        return None
    except ValueError:    # SGLang writes JSONL: one object per run
        rows = []
        for line in text.splitlines():
            try:
                rows.append(json.loads(line)) if line.strip() else None
            except (ValueError, RecursionError):
                return None
        if not rows or not all(isinstance(r, dict) and "mean_e2e_latency_ms" in r for r in rows):
            return None
        return [("sglang", r) for r in rows]
    if not isinstance(data, dict) or "format" in data:
        return None
    if isinstance(data.get("benchmarks"), list) and data["benchmarks"] and all(
            isinstance(b, dict) and isinstance(b.get("metrics"), dict) for b in data["benchmarks"]):
        return [("guidellm", b) for b in data["benchmarks"]]     # guidellm: one result per benchmark
    return [(recognise(data, path), data)]


def recognise(d: dict, path: str) -> str:
    """The format of a JSON object (a UserError when it is none gpuarena reads)."""
    if "backend" in d and "mean_e2e_latency_ms" in d:
        return "sglang"
    if all(k in d for k in ("backend", "duration", "completed", "output_throughput", "mean_ttft_ms")):
        return "vllm"
    if "results_ttft_s_mean" in d:
        return "llmperf"
    if isinstance(d.get("time_to_first_token"), dict) and "avg" in d["time_to_first_token"]:
        return "genai_perf"
    if isinstance(d.get("records"), dict) and isinstance(d["records"].get("ttft"), dict):
        return "aiperf"
    raise UserError(f"{path}: not a gpuarena bundle (expected \"format\": \"gpuarena-bundle\") nor a result file "
                    f"gpuarena recognises ({KNOWN})")


def parse(kind: str, data, path: str) -> F.Parsed:
    return getattr(F, kind)(data, path)


def differences(ours: dict, compare: list[tuple]) -> list[str]:
    """One line per figure where the recomputed value and the tool's differ by more than 1 %."""
    out = []
    for fig, q, theirs, why, _ in compare:
        mine = (ours.get(fig) or {}).get(q) if q else ours.get(fig)
        if not isinstance(mine, (int, float)) or theirs is None:
            continue
        if abs(mine - theirs) > CLOSE * max(abs(theirs), 1e-12):
            out.append(f"{fig}{' ' + q if q else ''}: recomputed {mine:.4g}, the tool's {theirs:.4g}; {why}")
    return out


def _tools_figures(p: F.Parsed) -> tuple[dict, list[str]]:
    """The tool's figures that share gpuarena's definition, in its names; the others, with why."""
    figs: dict = dict(p.figures)
    other = []
    for fig, q, v, why, same in p.compare:
        if v is None:
            continue
        if not same:
            other.append(f"{fig}{' ' + q if q else ''} {v:.4g} (the tool's): {why}")
        elif q:
            figs.setdefault(fig, {})[q] = v
        else:
            figs[fig] = v
    return {k: v for k, v in figs.items() if v is not None}, other


def to_result(p: F.Parsed, path: str, gpu: str) -> dict:
    """One parsed file as an endpoint-serve result (the dict a bundle carries)."""
    from gpuarena.workloads import registry

    wl = registry.get("endpoint-serve")
    m = p.meta
    conc = m.get("concurrency")
    given = {"model": str(m.get("model") or "")[:200], "engine": f"{m.get('backend') or '?'} (via {p.tool})"[:200],
             "rate": f"{m['rate']:g}" if m.get("rate") else "inf",
             "concurrency": conc if isinstance(conc, int) and not isinstance(conc, bool) and conc > 0 else 0}
    if isinstance(m.get("num_requests"), int) and m["num_requests"] > 0:
        given["num_requests"] = m["num_requests"]
    given.update({k: m[k] for k in ("prompt_len", "output_len") if m.get(k)})
    ok = [r for r in p.records or [] if r.ok]
    if ok and all(r.prompt_tokens for r in ok):
        given["prompt_len"] = max(1, round(sum(r.prompt_tokens for r in ok) / len(ok)))
    if ok:
        given["output_len"] = max(1, round(sum(r.output_tokens for r in ok) / len(ok)))
    params = wl.resolve_params(given)
    if p.records:
        dur = p.duration or max((r.sent + (r.e2e or 0) for r in p.records), default=0.0)
        figures = M.summarize(p.records, dur, params["slo_ttft_ms"], params["slo_tpot_ms"])
        figures["request_records"] = [r.to_dict() for r in p.records]
        diffs, other, how = differences(figures, p.compare), [], "recomputed from the file's per-request records"
    else:
        figures, other = _tools_figures(p)
        diffs, how = [], "the tool's own summary (the file has no per-request records)"
    # one measurement: the tool's figures on that GPU (the same file imported for another GPU is another result)
    digest = hashlib.sha256(json.dumps([p.tool_summary, gpu], sort_keys=True, default=str).encode()).hexdigest()[:32]
    extra = {"engine": params["engine"], "model": params["model"] or None, "api": params["api"],
             "server_gpus": params["server_gpus"],
             "rate_requests_per_s": None if params["rate"] == "inf" else float(params["rate"]),
             "concurrency": params["concurrency"] or None, **figures,
             "metrics_definition": "vLLM benchmarks/benchmark_serving.py calculate_metrics",
             "imported_from": {"tool": p.tool, "file": Path(path).name, "figures": how},
             "tool_summary": p.tool_summary, "tool_differences": diffs, "tool_not_comparable": other}
    return {"id": 1, "uid": f"serving:{digest}", "run_id": "imported", "case_key": f"endpoint-serve/{p.tool}/{digest}",
            "source": "measured", "workload": "endpoint-serve", "workload_version": wl.version, "variant": "seed",
            "params": params, "size": "full", "gpus": params["server_gpus"], "device": "cuda", "device_name": gpu,
            "status": "ok", "unit": wl.unit_name(params), "precision": "n/a",
            "throughput_median": extra.get("output_tokens_per_s"), "items_per_step": extra.get("output_tokens"),
            "warnings": (diffs + other)[:20], "extra": extra}
