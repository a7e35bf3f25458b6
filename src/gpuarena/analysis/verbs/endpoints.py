"""Served engines side by side: endpoint-serve results grouped like for like.

Two results stand in one group when they asked the same thing: the same model, API, prompt and
output lengths (or prompts file), arrival rate (or sweep) and concurrency, and the same SLOs;
where the server was (its URL, key, engine) is not part of the question.  Within a group each row
is one GPU and engine, with the figures people read (output tokens/s, goodput, TTFT and TPOT
percentiles, joules per token) and the cloud dollars per million output tokens delivered within
the SLO (analysis/verbs/cost.py's usd_per_million_tokens over the goodput tokens/s).  Beside them,
gpuarena's own decode loop (llm-serve) on the same GPUs at the same prompt and output lengths: its
batch B stands beside a served engine at concurrency B.
"""

from __future__ import annotations

from typing import Optional

from pydantic import BaseModel

from gpuarena.analysis.physics import models
from gpuarena.analysis.rows import common as R
from gpuarena.analysis.rows.engine import engine_of
from gpuarena.analysis.verbs.cost import usd_per_million_tokens
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.store.result import Result

SETTING = ("model", "api", "prompt_len", "output_len", "prompts_file", "rate", "concurrency", "slo_ttft_ms",
           "slo_tpot_ms")


MIX = ("length_dist", "length_spread", "dataset", "prefix_share", "prefix_group", "turns", "think_time_s",
       "trace_file", "load_shape", "duration_s")


def mix_text(p: dict) -> str:
    """', length_dist lognormal, prefix_share 0.3, ...': the request mix where it is not the default."""
    def shown(k: str) -> bool:
        v = p.get(k)
        if v in (None, "", 0, 0.0, "fixed", "steady") or (k == "turns" and v == 1):
            return False
        if k == "length_spread":
            return p.get("length_dist") in ("normal", "lognormal")
        return not (k == "prefix_group" and not p.get("prefix_share"))

    return "".join(f", {k} {p[k]}" for k in MIX if shown(k))


def lengths_text(p: dict) -> str:
    """What set the lengths: the prompts file, the trace, the dataset, or prompt_len / output_len."""
    if p.get("prompts_file"):
        return f"prompts {p['prompts_file']}"
    if p.get("trace_file"):
        return f"trace {p['trace_file']}"
    if p.get("length_dist") == "dataset":
        return f"lengths from {p.get('dataset') or 'the shipped chat table'}"
    return f"{p.get('prompt_len')} in / {p.get('output_len')} out"


def setting(r: Result) -> str:
    """The question a result answered, as one line."""
    p = r.params
    lengths = lengths_text(p)
    rate = "sweep" if p.get("rate") == "sweep" else f"rate {p.get('rate')}"
    conc = f", concurrency {p['concurrency']}" if p.get("concurrency") else ""
    def ms(x) -> str:   # an imported row may lack a parameter
        return f"{x:g}" if isinstance(x, (int, float)) else "?"

    return (f"{r.extra.model or p.get('model') or '?'} ({p.get('api')}), {lengths}{mix_text(p)}, {rate}{conc}, "
            f"SLO TTFT {ms(p.get('slo_ttft_ms'))} ms / TPOT {ms(p.get('slo_tpot_ms'))} ms")


def _p(spread, q: str):
    return getattr(spread, q) if spread is not None else None


def ok_as(r: Result, physics: str) -> bool:
    """An ok result of a workload the class says is judged by ``physics``: "endpoint" (a served
    engine), "serving" (gpuarena's own decode loop, shown beside them)."""
    return r.status == "ok" and models.PHYSICS[physics].judges(r.workload)


class EngineRow(BaseModel):
    """One served engine on one GPU (the newest ok endpoint-serve result of its setting): the figures
    vLLM's benchmark_serving reports, joules per token and the cloud $ per million tokens within the SLO."""

    setting: str                       # the question asked, as one line (see setting())
    gpu: str
    engine: str
    server_gpus: int
    rate: Optional[float]              # requests/s sent; None or inf: all at once
    concurrency: Optional[int]
    output_tokens_per_s: Optional[float]
    goodput_requests_per_s: Optional[float]
    slo_attainment: Optional[float]
    ttft_ms_p50: Optional[float]
    ttft_ms_p99: Optional[float]
    tpot_ms_p50: Optional[float]
    tpot_ms_p99: Optional[float]
    itl_ms_p99: Optional[float]
    e2e_ms_p99: Optional[float]
    joules_per_token: Optional[float]
    failed: Optional[int]
    usd_per_million_tokens_at_slo: Optional[float]
    result: int                        # the result's id


class OwnLoopRow(BaseModel):
    """gpuarena's own decode loop (llm-serve) at a served result's GPU and lengths."""

    lengths: str
    gpu: str
    engine: str
    shape: Optional[str]
    batch: Optional[int]
    output_tokens_per_s: Optional[float]
    ttft_ms: Optional[float]
    tpot_ms_p50: Optional[float]
    tpot_ms_p99: Optional[float]
    joules_per_token: Optional[float]
    result: int


def engine_rows(results: list[Result], prices: dict | None = None) -> list[EngineRow]:
    """One row per newest ok endpoint-serve result, sorted by setting then goodput (best first)."""
    cat = {g.name: g for g in catalog.priced(prices)}
    out = []
    for r in R.latest([r for r in results if ok_as(r, "endpoint")]):
        e = r.extra
        gpu = cat.get(R.gpu_of(r))
        gpus = e.server_gpus or 1
        out.append(EngineRow(
            setting=setting(r), gpu=R.gpu_of(r), engine=engine_of(r), server_gpus=gpus,
            rate=e.rate_requests_per_s, concurrency=e.concurrency, output_tokens_per_s=e.output_tokens_per_s,
            goodput_requests_per_s=e.goodput_requests_per_s, slo_attainment=e.slo_attainment,
            ttft_ms_p50=_p(e.ttft_ms, "p50"), ttft_ms_p99=_p(e.ttft_ms, "p99"),
            tpot_ms_p50=_p(e.tpot_ms, "p50"), tpot_ms_p99=_p(e.tpot_ms, "p99"),
            itl_ms_p99=_p(e.itl_ms, "p99"), e2e_ms_p99=_p(e.e2e_ms, "p99"),
            joules_per_token=r.energy_j_per_item, failed=e.failed,
            usd_per_million_tokens_at_slo=usd_per_million_tokens(gpu.cloud.usd if gpu else None,
                                                                 e.goodput_tokens_per_s, gpus),
            result=r.id))
    out.sort(key=lambda x: (x.setting, -(x.goodput_requests_per_s or 0), x.gpu, x.engine))
    return out


def _lengths(r: Result) -> tuple | None:
    """(prompt, output) tokens every request of an endpoint-serve result asked for; None when they vary
    (a prompts file, a trace, a length distribution, turns carrying the conversation)."""
    p = r.params
    varied = (p.get("prompts_file") or p.get("trace_file") or p.get("length_dist", "fixed") != "fixed"
              or p.get("turns", 1) != 1)
    return None if varied else (p.get("prompt_len"), p.get("output_len"))


def own_loop_rows(results: list[Result]) -> list[OwnLoopRow]:
    """The newest ok llm-serve results on a GPU and at the prompt/output lengths of an ok endpoint-serve
    result: generated tokens/s over whole requests (prefill included), TTFT (the prefill of the batch),
    TPOT median and p99 of the decode steps, joules per generated token."""
    served = {(R.gpu_of(r), _lengths(r)) for r in results if ok_as(r, "endpoint")}
    out = []
    for r in R.latest([r for r in results if ok_as(r, "serving") and not R.is_search(r)]):
        p, e = r.params, r.extra
        gpu, lengths = R.gpu_of(r), (p.get("prompt_len"), p.get("new_tokens"))
        if (gpu, lengths) not in served:
            continue
        out.append(OwnLoopRow(lengths=f"{lengths[0]} in / {lengths[1]} out", gpu=gpu,
                              engine=f"gpuarena llm-serve {r.variant}", shape=p.get("hf_config") or p.get("shape"),
                              batch=p.get("batch_size"), output_tokens_per_s=r.throughput_median,
                              ttft_ms=None if e.ttft_s is None else e.ttft_s * 1000, tpot_ms_p50=e.tpot_ms_median,
                              tpot_ms_p99=e.tpot_ms_p99, joules_per_token=r.energy_j_per_item, result=r.id))
    out.sort(key=lambda x: (x.gpu, x.lengths, x.batch or 0, x.engine))
    return out


def table(store, prices: dict | None = None) -> tuple[list[EngineRow], list[OwnLoopRow]]:
    """(the served engines' rows, gpuarena's own loop at their lengths)."""
    results = store.results(status="ok")
    rows = engine_rows(results, prices)
    if not rows:
        raise UserError("no ok endpoint-serve results (run `gpuarena run -w endpoint-serve --set base_url=...`)")
    return rows, own_loop_rows(results)
