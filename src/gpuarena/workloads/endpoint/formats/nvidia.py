"""NVIDIA's two clients: AIPerf (ai-dynamo/aiperf) and GenAI-Perf (triton-inference-server/perf_analyzer).

Summaries.  GenAI-Perf ``profile_export_genai_perf.json`` and current AIPerf
``profile_export_aiperf.json`` hold one block per metric at the top level,
``{"unit": "ms", "avg", "p50", "p90", "p99", "min", "max", "std" ...}``: ``time_to_first_token``,
``inter_token_latency``, ``request_latency``, ``output_token_throughput``, ``request_throughput``,
``output_sequence_length``, ``input_sequence_length`` ..., and ``input_config``; AIPerf adds
``schema_version``, ``aiperf_version``, ``was_cancelled``, ``error_summary`` and
``inter_chunk_latency``.  The first AIPerf releases put the blocks under ``records`` by tag, with
TTFT tagged ``ttft``.  Both tools' inter-token latency is (request latency - TTFT) / (output tokens
- 1): gpuarena's TPOT; AIPerf's inter-chunk latency is gpuarena's ITL.

Per-request records.  AIPerf ``profile_export.jsonl``: one request a line,
``{"metadata": {"request_start_ns", "request_end_ns", "benchmark_phase" ...}, "metrics":
{tag: {"value", "unit"}} (null when it failed), "error": null | {"code", "type", "message"}}`` with
the tags ``time_to_first_token``, ``request_latency``, ``inter_chunk_latency`` (a list),
``output_sequence_length``, ``input_sequence_length``.  GenAI-Perf keeps perf_analyzer's
``profile_export.json``: ``{"experiments": [{"experiment": {"mode", "value"}, "requests":
[{"timestamp" (ns), "response_timestamps" (ns), "response_outputs": [{"response": "data: {...}"}
| {"text_output": ...}]}]}]}``; responses without text (the role chunk, ``[DONE]``) do not count,
and GenAI-Perf counts output tokens by tokenizing the text (a tokenizer gpuarena does not have:
its tokens here are the server's usage count where a chunk carries one, else the text chunks).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from gpuarena.errors import UserError
from gpuarena.workloads.endpoint import metrics as M
from gpuarena.workloads.endpoint.formats import (
    TIME_UNITS, Parsed, count, error_kind, find_key, flat, lens, num, seconds, sibling,
)

EARLY_TAGS = {"ttft": "time_to_first_token", "ttst": "time_to_second_token"}
SAME = "the same definition"
TPOT_WHY = "{tool}'s inter-token latency is (request latency - TTFT) / (output tokens - 1): gpuarena's TPOT"
TOKENS_WHY = ("; GenAI-Perf counts output tokens by tokenizing the text, gpuarena (without that tokenizer) counts "
              "the server's usage or the text chunks")


def is_aiperf_summary(d: dict) -> bool:
    return (isinstance(d.get("records"), dict) and any(isinstance(v, dict) and "avg" in v
                                                       for v in d["records"].values())) or \
        (_is_summary(d) and (any(k in d for k in ("aiperf_version", "schema_version", "was_cancelled", "error_summary",
                                                  "benchmark_id", "request_count", "inter_chunk_latency"))
                             or isinstance((d.get("input_config") or {}).get("loadgen"), dict)))


def _is_summary(d: dict) -> bool:
    return any(isinstance(d.get(k), dict) and "avg" in d[k] for k in ("time_to_first_token", "request_latency"))


def is_genai_perf_summary(d: dict) -> bool:
    return _is_summary(d) and not is_aiperf_summary(d)


def is_aiperf_record(d) -> bool:
    return isinstance(d, dict) and isinstance(d.get("metadata"), dict) and "metrics" in d


def is_pa_export(d: dict) -> bool:
    return isinstance(d.get("experiments"), list) and bool(d["experiments"]) and all(
        isinstance(e, dict) and isinstance(e.get("requests"), list) for e in d["experiments"])


def _blocks(d: dict) -> dict:
    """The metric blocks by tag (AIPerf's first layout moved up, its early tags renamed)."""
    src = d["records"] if isinstance(d.get("records"), dict) else d
    return {EARLY_TAGS.get(k, k): v for k, v in src.items() if isinstance(v, dict) and ("avg" in v or "unit" in v)}


def _stat(blocks: dict, tag: str, q: str, path: str, to_ms: bool = True):
    b = blocks.get(tag)
    if not isinstance(b, dict) or b.get(q) is None:
        return None
    v = num(b[q])
    if v is None or not math.isfinite(v):
        raise UserError(f"{path}: {tag}.{q} is not a number")
    unit = str(b.get("unit") or "ms")
    if to_ms and unit in TIME_UNITS:
        v = v * TIME_UNITS[unit] * 1e3
    return v


def summary(d: dict, path: str, tool: str) -> Parsed:
    blocks = _blocks(d)
    name = "AIPerf" if tool == "aiperf" else "GenAI-Perf"
    cmp = []
    for ours, tag, why in (("ttft_ms", "time_to_first_token", SAME), ("tpot_ms", "inter_token_latency",
                                                                     TPOT_WHY.format(tool=name)),
                           ("itl_ms", "inter_chunk_latency", "AIPerf's inter-chunk latency: every gap between "
                                                             "two chunks with content, pooled, as gpuarena's ITL"),
                           ("e2e_ms", "request_latency", SAME + " (send to the last chunk with content)")):
        for q in ("avg", "p50", "p90", "p99"):
            cmp.append((ours, "mean" if q == "avg" else q, _stat(blocks, tag, q, path), why, True))
    dur_why = ("AIPerf's duration runs from the first request sent to the last response received (the usage chunk "
               "or [DONE] after the last token), gpuarena's to the last token" if tool == "aiperf" else
               "the same definition (first request sent to the last response with text)")
    cmp += [("output_tokens_per_s", None, _stat(blocks, "output_token_throughput", "avg", path, False),
             "output tokens over the run's duration; " + dur_why, True),
            ("requests_per_s", None, _stat(blocks, "request_throughput", "avg", path, False),
             "completed requests over the run's duration; " + dur_why, True)]
    cfg = d.get("input_config") if isinstance(d.get("input_config"), dict) else {}
    models = find_key(cfg, ("model_names", "model", "models"))
    conc, rate = find_key(cfg, ("concurrency",)), num(find_key(cfg, ("request_rate",)))
    if isinstance(models, list):
        models = next((m if isinstance(m, str) else m.get("name") for m in models
                       if isinstance(m, str) or isinstance(m, dict)), None)
    meta = {"model": models if isinstance(models, str) else None,
            "backend": "openai-compatible server", "rate": rate,
            "concurrency": conc if isinstance(conc, int) else None,
            "num_requests": _stat(blocks, "request_count", "avg", path, False),
            **lens(_stat(blocks, "input_sequence_length", "avg", path, False),
                   _stat(blocks, "output_sequence_length", "avg", path, False), 1)}
    if isinstance(meta["num_requests"], float):
        meta["num_requests"] = int(meta["num_requests"])
    tool_summary = {f"{k}_avg": v.get("avg") for k, v in blocks.items() if num(v.get("avg")) is not None}
    tool_summary.update(flat({k: v for k, v in d.items() if k in ("schema_version", "aiperf_version", "benchmark_id")}))
    return Parsed(tool, None, meta, tool_summary, None, {}, cmp)


def aiperf(d: dict, path: str) -> Parsed:
    return summary(d, path, "aiperf")


def genai_perf(d: dict, path: str) -> Parsed:
    return summary(d, path, "genai-perf")


def _value(m: dict, tag: str, path: str, i: int, time: bool = True):
    """A record's metric in seconds (time) or as a count; None when the record lacks it."""
    b = m.get(tag)
    if b is None:
        return None
    if not isinstance(b, dict) or "value" not in b:
        raise UserError(f"{path}: line {i + 1}: metrics.{tag} is not {{\"value\", \"unit\"}}")
    unit = str(b.get("unit") or ("ms" if time else "tokens"))
    if not time:
        return count(b["value"], path, f"line {i + 1}: metrics.{tag}")
    if unit not in TIME_UNITS:
        raise UserError(f"{path}: line {i + 1}: metrics.{tag} has the unit {unit!r}, not a time")
    v = b["value"]
    if isinstance(v, list):
        return [seconds(x, path, f"line {i + 1}: metrics.{tag}", TIME_UNITS[unit]) for x in v]
    return seconds(v, path, f"line {i + 1}: metrics.{tag}", TIME_UNITS[unit])


def aiperf_records(rows: list, path: str) -> Parsed:
    """An AIPerf profile_export.jsonl, with the profile_export_aiperf.json beside it when there is one."""
    recs, starts = [], []
    for i, row in enumerate(rows):
        if not is_aiperf_record(row):
            raise UserError(f"{path}: line {i + 1} is not an AIPerf record ({{\"metadata\", \"metrics\", \"error\"}})")
        md = row["metadata"]
        if md.get("benchmark_phase") not in (None, "profiling"):
            continue                                     # warmup requests are not the run
        start = md.get("request_start_ns")
        starts.append(seconds(start, path, f"line {i + 1}: metadata.request_start_ns", 1e-9) if start is not None
                      else None)
        m = row.get("metrics") if isinstance(row.get("metrics"), dict) else {}
        isl = _value(m, "input_sequence_length", path, i, False) or _value(m, "error_isl", path, i, False)
        err = row.get("error")
        if err:
            e = err if isinstance(err, dict) else {"message": str(err)}
            recs.append(M.Record(sent=0.0, error=error_kind(f"{e.get('type', '')} {e.get('message', '')}",
                                                            e.get("code")),
                                 detail=str(e.get("message") or e.get("type") or "")[:200], prompt_tokens=isl))
            continue
        ttft = _value(m, "time_to_first_token", path, i) or _value(m, "ttft", path, i)
        e2e = _value(m, "request_latency", path, i)
        gaps = _value(m, "inter_chunk_latency", path, i) or []
        osl = _value(m, "output_sequence_length", path, i, False)
        osl = osl if osl is not None else _value(m, "output_token_count", path, i, False)
        if e2e is None or osl is None:
            raise UserError(f"{path}: line {i + 1}: a successful record without request_latency or "
                            f"output_sequence_length")
        if not isinstance(gaps, list):
            gaps = []
        recs.append(M.Record(sent=0.0, ok=osl > 0, ttft=ttft, gaps=gaps, e2e=e2e, prompt_tokens=isl,
                             output_tokens=osl, tokens_from="tool", error=None if osl > 0 else "empty"))
    if not recs:
        raise UserError(f"{path}: no profiling records")
    _offsets(recs, starts, path)
    name = Path(path).name
    found = sibling(path, name[: -len(".jsonl")] + "_aiperf.json") if name.endswith(".jsonl") else None
    if found and isinstance(found[1], dict) and is_aiperf_summary(found[1]):
        p = summary(found[1], found[0], "aiperf")
    else:
        p = Parsed("aiperf", None, {"backend": "openai-compatible server"}, {}, None, {}, [])
        p.notes.append("no profile_export_aiperf.json beside the records: nothing of AIPerf's own to compare")
    p.records = recs
    return p


def _offsets(recs: list, starts: list, path: str) -> None:
    if any(s is None for s in starts):
        raise UserError(f"{path}: a record without its request start time")
    t0 = min(starts)
    for r, s in zip(recs, starts):
        r.sent = s - t0


def _texts(out, path: str, where: str) -> tuple[str, dict]:
    """The generated text one response carries and the usage it states (perf_analyzer's OpenAI SSE or
    Triton outputs)."""
    if not isinstance(out, dict):
        raise UserError(f"{path}: {where} is not an object")
    if "response" not in out:
        return "".join(str(v) for k, v in out.items() if k in ("text_output", "output", "text") and v), {}
    text, usage = "", {}
    body = str(out["response"])
    events = [ln[5:].strip() for ln in body.splitlines() if ln.startswith("data:")] or [body.strip()]
    for ev in events:
        if not ev or ev == "[DONE]":
            continue
        try:
            data = json.loads(ev)
        except (ValueError, RecursionError):
            raise UserError(f"{path}: {where} is not an OpenAI JSON chunk") from None
        for ch in data.get("choices") or [] if isinstance(data, dict) else []:
            if isinstance(ch, dict):
                part = (ch.get("delta") or {}).get("content") if isinstance(ch.get("delta"), dict) else None
                part = part or ch.get("text") or ((ch.get("message") or {}).get("content")
                                                  if isinstance(ch.get("message"), dict) else None)
                text += part if isinstance(part, str) else ""
        if isinstance(data, dict) and isinstance(data.get("usage"), dict):
            usage = data["usage"]
    return text, usage


def pa_export(d: dict, path: str) -> list[Parsed]:
    """perf_analyzer's profile_export.json (GenAI-Perf's per-request file): one result per experiment."""
    found = sibling(path, Path(path).stem + "_genai_perf.json")
    out = []
    for x, e in enumerate(d["experiments"]):
        exp = e.get("experiment") if isinstance(e.get("experiment"), dict) else {}
        recs, starts, counted = [], [], False
        for i, r in enumerate(e["requests"]):
            where = f"experiment {x} request {i}"
            if not isinstance(r, dict):
                raise UserError(f"{path}: {where} is not an object")
            ts, outs = r.get("response_timestamps"), r.get("response_outputs")
            if not isinstance(ts, list) or not isinstance(outs, list) or len(ts) != len(outs):
                raise UserError(f"{path}: {where}: response_timestamps and response_outputs must be lists of one "
                                f"length")
            t0 = seconds(r.get("timestamp"), path, f"{where}: timestamp", 1e-9)
            starts.append(t0)
            times, usage = [], {}
            for j, (t, o) in enumerate(zip(ts, outs)):
                text, u = _texts(o, path, f"{where} response {j}")
                usage = u or usage
                if text:
                    times.append(seconds(t, path, f"{where}: response_timestamps[{j}]", 1e-9) - t0)
            if not times or min(times) < 0:
                recs.append(M.Record(sent=0.0, error="empty", detail="no response with text"))
                continue
            n = usage.get("completion_tokens")
            counted = counted or not isinstance(n, int)
            recs.append(M.Record(sent=0.0, ok=True, ttft=times[0], gaps=[b - a for a, b in zip(times, times[1:])],
                                 e2e=times[-1], prompt_tokens=usage.get("prompt_tokens") if isinstance(
                                     usage.get("prompt_tokens"), int) else None,
                                 output_tokens=n if isinstance(n, int) else len(times),
                                 tokens_from="usage" if isinstance(n, int) else "counted"))
        if not recs:
            raise UserError(f"{path}: experiment {x} has no requests")
        _offsets(recs, starts, path)
        if found and isinstance(found[1], dict) and is_genai_perf_summary(found[1]) and len(d["experiments"]) == 1:
            p = summary(found[1], found[0], "genai-perf")
            if counted:
                p.compare = [(f, q, v, why + TOKENS_WHY if f in ("tpot_ms", "output_tokens_per_s") else why, s)
                             for f, q, v, why, s in p.compare]
        else:
            p = Parsed("genai-perf", None, {"backend": f"{d.get('service_kind') or 'openai'} endpoint"}, {}, None,
                       {}, [])
            p.notes.append("no profile_export_genai_perf.json beside it (or several experiments): nothing of "
                           "GenAI-Perf's own to compare")
        mode, value = exp.get("mode"), num(exp.get("value"))
        if mode == "concurrency" and value:
            p.meta["concurrency"] = int(value)
        elif mode == "request_rate" and value:
            p.meta["rate"] = value
        if counted:
            p.notes.append("output tokens are the text chunks where the server stated no usage (GenAI-Perf "
                           "tokenizes the text)")
        p.records = recs
        out.append(p)
    return out
