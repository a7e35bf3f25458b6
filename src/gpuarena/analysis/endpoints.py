"""Served engines side by side: endpoint-serve results grouped like for like.

Two results stand in one group when they asked the same thing: the same model, API, prompt and
output lengths (or prompts file), arrival rate (or sweep) and concurrency, and the same SLOs;
where the server was (its URL, key, engine) is not part of the question.  Within a group each row
is one GPU and engine, with the figures people read (output tokens/s, goodput, TTFT and TPOT
percentiles, joules per token) and the cloud dollars per million output tokens delivered within
the SLO (analysis/cost.py's usd_per_million_tokens over the goodput tokens/s).
"""

from __future__ import annotations

from gpuarena.analysis import rows as R
from gpuarena.analysis.cost import usd_per_million_tokens
from gpuarena.analysis.tables import render as _render
from gpuarena.data import catalog
from gpuarena.errors import UserError

WORKLOAD = "endpoint-serve"
SETTING = ("model", "api", "prompt_len", "output_len", "prompts_file", "rate", "concurrency", "slo_ttft_ms",
           "slo_tpot_ms")


def setting(r: dict) -> str:
    """The question a result answered, as one line."""
    p = r.params
    lengths = (f"prompts {p.get('prompts_file')}" if p.get("prompts_file")
               else f"{p.get('prompt_len')} in / {p.get('output_len')} out")
    rate = "sweep" if p.get("rate") == "sweep" else f"rate {p.get('rate')}"
    conc = f", concurrency {p['concurrency']}" if p.get("concurrency") else ""
    def ms(x) -> str:   # an imported row may lack a parameter
        return f"{x:g}" if isinstance(x, (int, float)) else "?"

    return (f"{r.extra.model or p.get('model') or '?'} ({p.get('api')}), {lengths}, {rate}{conc}, "
            f"SLO TTFT {ms(p.get('slo_ttft_ms'))} ms / TPOT {ms(p.get('slo_tpot_ms'))} ms")


def _p(spread, q: str):
    return getattr(spread, q) if spread is not None else None


def engine_rows(results: list[dict], prices: dict | None = None) -> list[dict]:
    """One row per newest ok endpoint-serve result, sorted by setting then goodput (best first)."""
    cat = {g.name: g for g in catalog.priced(prices)}
    out = []
    for r in R.latest([r for r in results if r.get("workload") == WORKLOAD and r.get("status") == "ok"]):
        e = r.extra
        gpu = cat.get(R.gpu_of(r))
        gpus = e.server_gpus or 1
        out.append({
            "setting": setting(r), "gpu": R.gpu_of(r), "engine": R.engine_of(r), "server_gpus": gpus,
            "rate": e.rate_requests_per_s, "output_tokens_per_s": e.output_tokens_per_s,
            "goodput_requests_per_s": e.goodput_requests_per_s, "slo_attainment": e.slo_attainment,
            "ttft_ms_p50": _p(e.ttft_ms, "p50"), "ttft_ms_p99": _p(e.ttft_ms, "p99"),
            "tpot_ms_p50": _p(e.tpot_ms, "p50"), "tpot_ms_p99": _p(e.tpot_ms, "p99"),
            "itl_ms_p99": _p(e.itl_ms, "p99"), "e2e_ms_p99": _p(e.e2e_ms, "p99"),
            "joules_per_token": r.energy_j_per_item, "failed": e.failed,
            "usd_per_million_tokens_at_slo": usd_per_million_tokens(gpu.cloud.usd if gpu else None,
                                                                    e.goodput_tokens_per_s, gpus),
            "result": r.id,
        })
    out.sort(key=lambda x: (x["setting"], -(x["goodput_requests_per_s"] or 0), x["gpu"], x["engine"]))
    return out


COLUMNS = [("setting", "setting"), ("gpu", "GPU"), ("engine", "engine"), ("server_gpus", "GPUs"),
           ("rate", "req/s sent"), ("output_tokens_per_s", "output tok/s"),
           ("goodput_requests_per_s", "goodput req/s"), ("slo_attainment", "within SLO"),
           ("ttft_ms_p50", "TTFT p50 ms"), ("ttft_ms_p99", "TTFT p99 ms"), ("tpot_ms_p50", "TPOT p50 ms"),
           ("tpot_ms_p99", "TPOT p99 ms"), ("itl_ms_p99", "ITL p99 ms"), ("e2e_ms_p99", "E2E p99 ms"),
           ("joules_per_token", "J/token"), ("usd_per_million_tokens_at_slo", "cloud $/M tok at SLO"),
           ("failed", "failed")]


def render(rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return _render([], [], "json", data={"rows": rows})
    shown = [{**r, "rate": "all at once" if r["rate"] in (None, float("inf")) else r["rate"]} for r in rows]
    return _render(COLUMNS, shown, fmt, title="Served engines, like for like", notes=[
        "one group per setting (model, API, lengths, arrivals, SLOs); metrics as vLLM's benchmark_serving "
        "defines them; goodput: requests within both SLOs per second; $/M tok at SLO: the catalog's cloud "
        "price per GPU-hour over the output tokens of those requests"])


def table(store, prices: dict | None = None) -> list[dict]:
    rows = engine_rows(store.results(workload=WORKLOAD, status="ok"), prices)
    if not rows:
        raise UserError("no ok endpoint-serve results (run `gpuarena run -w endpoint-serve --set base_url=...`)")
    return rows
