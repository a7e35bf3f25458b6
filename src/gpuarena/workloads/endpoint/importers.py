"""Other serving benchmarks' result files, recognised by content and stored as endpoint-serve results.

`gpuarena import FILE` reads a gpuarena bundle or one of the files formats/ reads (vllm bench serve,
SGLang bench_serving, LLMPerf, AIPerf, GenAI-Perf, guidellm, MLPerf loadgen).  Where a file has
per-request records, every figure is recomputed from them with gpuarena's definitions
(workloads/endpoint/metrics.py: vLLM's own) and the tool's summary kept beside
(``extra.tool_summary``); each figure that differs from the tool's by more than 1 % gets a line
saying why (``extra.tool_differences``, also the result's warnings).  A file without records
stores the tool's figures that share gpuarena's definition, and lists the others with why they
are not gpuarena's (``extra.tool_not_comparable``).  ``extra.tool_notes`` says what else a reader
should know (a sample of requests, a figure the file cannot give).

A file recognised as one of these but malformed is one UserError line naming it: nothing is stored.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from gpuarena import safeio
from gpuarena.errors import UserError
from gpuarena.workloads.endpoint import metrics as M
from gpuarena.workloads.endpoint.formats import MAX_BYTES, Parsed, guidellm, llmperf, mlperf, nvidia, vllm

CLOSE = 0.01          # figures within 1 % agree
KNOWN = "vllm bench serve, SGLang bench_serving, LLMPerf *_summary.json / *_individual_responses.json, " \
        "AIPerf profile_export_aiperf.json / profile_export.jsonl, GenAI-Perf profile_export_genai_perf.json / " \
        "profile_export.json, guidellm benchmarks.json, MLPerf loadgen mlperf_log_summary.txt"
THROUGHPUTS = ("output_tokens_per_s", "requests_per_s", "total_tokens_per_s", "goodput_requests_per_s",
               "goodput_tokens_per_s")


def read(path: str):
    """[(tool, its data)] for a serving tool's file; None for what the bundle reader should judge."""
    try:
        text = safeio.read_text(path, path, MAX_BYTES)
    except UserError:
        return None
    if mlperf.is_summary(text):
        return [("mlperf", text)]
    try:
        data = json.loads(text)
    except RecursionError:
        return None
    except ValueError:
        return _jsonl(text, path)
    if isinstance(data, list):
        return [("llmperf_responses", data)] if llmperf.is_responses(data) else None
    if not isinstance(data, dict) or "format" in data:
        return None
    if guidellm.is_benchmarks(data):
        return [("guidellm", (b, data, i)) for i, b in enumerate(data["benchmarks"])]   # one result per benchmark
    if nvidia.is_pa_export(data):
        return [("pa_export", data)]
    if nvidia.is_aiperf_record(data):
        return [("aiperf_records", [data])]
    return [(recognise(data, path), data)]


def _jsonl(text: str, path: str):
    """JSON Lines: SGLang's runs, vLLM's --append-result runs, AIPerf's per-request records."""
    rows, first = [], None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            if first is None:
                return None            # not JSON Lines at all: the bundle reader says what it is
            raise UserError(f"{path}: line {n} is not JSON (a {first} JSON Lines file)") from None
        if first is None:
            first = "AIPerf profile_export.jsonl" if nvidia.is_aiperf_record(row) else \
                "SGLang bench_serving" if isinstance(row, dict) and vllm.is_sglang(row) else \
                "vllm bench serve" if isinstance(row, dict) and vllm.is_vllm(row) else None
            if first is None:
                return None
        rows.append(row)
    if first is None:
        return None
    if first.startswith("AIPerf"):
        return [("aiperf_records", rows)]
    kind = "sglang" if first.startswith("SGLang") else "vllm"
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict) or not (vllm.is_sglang(row) if kind == "sglang" else vllm.is_vllm(row)):
            raise UserError(f"{path}: run {n} is not a {first} result like the first")
    return [(kind, r) for r in rows]


def recognise(d: dict, path: str) -> str:
    """The format of a JSON object (a UserError when it is none gpuarena reads)."""
    for kind, test in (("sglang", vllm.is_sglang), ("vllm", vllm.is_vllm), ("llmperf", llmperf.is_summary),
                       ("aiperf", nvidia.is_aiperf_summary), ("genai_perf", nvidia.is_genai_perf_summary)):
        if test(d):
            return kind
    raise UserError(f"{path}: not a gpuarena bundle (expected \"format\": \"gpuarena-bundle\") nor a result file "
                    f"gpuarena recognises ({KNOWN})")


PARSERS = {"vllm": vllm.vllm, "sglang": vllm.sglang, "llmperf": llmperf.summary,
           "llmperf_responses": llmperf.responses, "aiperf": nvidia.aiperf, "genai_perf": nvidia.genai_perf,
           "aiperf_records": nvidia.aiperf_records, "mlperf": mlperf.summary}


def parse(kind: str, data, path: str) -> list[Parsed]:
    """The file's runs, each parsed."""
    if kind == "guidellm":
        b, report, i = data
        return [guidellm.benchmark(b, path, report, i)]
    if kind == "pa_export":
        return nvidia.pa_export(data, path)
    return [PARSERS[kind](data, path)]


def results(found: list, path: str, gpu: str) -> tuple[list[Parsed], list[dict]]:
    """Every run of the file parsed and made a result; anything malformed that the checks did not name is
    still one UserError line naming the file (never a traceback), before anything is stored."""
    kind = found[0][0] if found else "?"
    try:
        parsed = [p for k, data in found for p in parse(k, data, path)]
        return parsed, [to_result(p, path, gpu) for p in parsed]
    except UserError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, ZeroDivisionError, OverflowError) as exc:
        raise UserError(f"{path}: a malformed {kind.replace('_', ' ')} file "
                        f"({' '.join(str(exc).split())[:160] or type(exc).__name__})") from None


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


def _tools_figures(p: Parsed, path: str) -> tuple[dict, list[str]]:
    """The tool's figures that share gpuarena's definition, in its names; the others, with why."""
    figs: dict = dict(p.figures)
    other = []
    for fig, q, v, why, same in p.compare:
        if v is None:
            continue
        if not same:
            other.append(f"{fig}{' ' + q if q else ''} {v:.4g} (the tool's): {why}")
        elif q:
            figs.setdefault(fig, {})
            if q not in figs[fig]:
                figs[fig][q] = v
        else:
            figs[fig] = v
    figs = {k: v for k, v in figs.items() if v is not None}
    _consistent(figs, path)
    return figs, other


QUANTILES = ("p50", "p90", "p95", "p99")


def _consistent(figs: dict, path: str) -> None:
    """A summary that contradicts itself (a negative time or rate, a higher percentile below a lower one) is a
    damaged file: refused, not stored."""
    for fig, v in figs.items():
        if isinstance(v, dict):
            for q, x in v.items():
                if isinstance(x, (int, float)) and x < 0:
                    raise UserError(f"{path}: the tool's summary gives {fig} {q} {x:g}, below zero")
            qs = [(q, v[q]) for q in QUANTILES if isinstance(v.get(q), (int, float))]
            for (lo, a), (hi, b) in zip(qs, qs[1:]):
                if b < a * (1 - CLOSE):
                    raise UserError(f"{path}: the tool's summary contradicts itself: {fig} {hi} {b:g} is below its "
                                    f"{lo} {a:g}")
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and v < 0:
            raise UserError(f"{path}: the tool's summary gives {fig} {v:g}, below zero")


def _recomputed(p: Parsed, params: dict) -> tuple[dict, list[str]]:
    """gpuarena's figures from the records; a sample's throughputs are the tool's (a sample has no rate)."""
    recs = p.records or []
    dur = p.duration or max((r.sent + (r.e2e or 0) for r in recs), default=0.0)
    figures = M.summarize(recs, dur, params["slo_ttft_ms"], params["slo_tpot_ms"])
    figures["request_records"] = [r.to_dict() for r in recs]
    compare = p.compare
    if p.sampled:
        tools = {f: v for f, q, v, _, same in p.compare if q is None and same}
        for k in THROUGHPUTS:
            figures[k] = tools.get(k)
        figures.update({k: v for k, v in p.figures.items() if v is not None})
        compare = [c for c in p.compare if c[0] not in THROUGHPUTS]
    return figures, differences(figures, compare)


def to_result(p: Parsed, path: str, gpu: str) -> dict:
    """One parsed run as an endpoint-serve result (the dict a bundle carries)."""
    from gpuarena.workloads import registry

    wl = registry.get("endpoint-serve")
    m = p.meta
    conc = m.get("concurrency")
    given = {"model": str(m.get("model") or "")[:200], "engine": f"{m.get('backend') or '?'} (via {p.tool})"[:200],
             "rate": f"{m['rate']:g}" if m.get("rate") else "inf",
             "concurrency": conc if isinstance(conc, int) and not isinstance(conc, bool) and conc > 0 else 0}
    if isinstance(m.get("num_requests"), int) and not isinstance(m["num_requests"], bool) and m["num_requests"] > 0:
        given["num_requests"] = m["num_requests"]
    given.update({k: m[k] for k in ("prompt_len", "output_len") if m.get(k)})
    ok = [r for r in p.records or [] if r.ok]
    if ok and all(r.prompt_tokens for r in ok):
        given["prompt_len"] = max(1, round(sum(r.prompt_tokens for r in ok) / len(ok)))
    if ok:
        given["output_len"] = max(1, round(sum(r.output_tokens for r in ok) / len(ok)))
    params = wl.resolve_params(given)
    if p.records:
        figures, diffs = _recomputed(p, params)
        other = []
        how = "recomputed from the file's per-request records"
        if not p.compare:
            how += " (no summary of the tool's beside them to compare)"
    else:
        figures, other = _tools_figures(p, path)
        diffs, how = [], "the tool's own summary (the file has no per-request records)"
    # one measurement: the tool's figures on that GPU (the same file imported for another GPU is another result)
    digest = hashlib.sha256(json.dumps([p.tool_summary, figures.get("request_records"), gpu], sort_keys=True,
                                       default=str).encode()).hexdigest()[:32]
    extra = {"engine": params["engine"], "model": params["model"] or None, "api": params["api"],
             "server_gpus": params["server_gpus"],
             "rate_requests_per_s": None if params["rate"] == "inf" else float(params["rate"]),
             "concurrency": params["concurrency"] or None, **figures,
             "metrics_definition": "vLLM benchmarks/benchmark_serving.py calculate_metrics",
             "imported_from": {"tool": p.tool, "file": Path(path).name, "figures": how},
             "tool_summary": p.tool_summary, "tool_differences": diffs, "tool_not_comparable": other,
             "tool_notes": list(p.notes)}
    return {"id": 1, "uid": f"serving:{digest}", "run_id": "imported", "case_key": f"endpoint-serve/{p.tool}/{digest}",
            "source": "measured", "workload": "endpoint-serve", "workload_version": wl.version, "variant": "seed",
            "params": params, "size": "full", "gpus": params["server_gpus"], "device": "cuda", "device_name": gpu,
            "status": "ok", "unit": wl.unit_name(params), "precision": "n/a",
            "throughput_median": extra.get("output_tokens_per_s"), "items_per_step": extra.get("output_tokens"),
            "warnings": (diffs + other + p.notes)[:20], "extra": extra}
