"""`gpuarena engines` as text: the served engines like for like, and gpuarena's own decode loop
at the same lengths beside them (the report's served-engines section uses the same words)."""

from __future__ import annotations

from gpuarena.analysis.verbs.endpoints import EngineRow, OwnLoopRow
from gpuarena.analysis.verbs.frontier import Curve, lines
from gpuarena.report.mdtext import inert
from gpuarena.report.text.table import as_json, render as table

COLUMNS = [("setting", "setting"), ("gpu", "GPU"), ("engine", "engine"), ("server_gpus", "GPUs"),
           ("rate", "req/s sent"), ("output_tokens_per_s", "output tok/s"),
           ("goodput_requests_per_s", "goodput req/s"), ("slo_attainment", "within SLO"),
           ("ttft_ms_p50", "TTFT p50 ms"), ("ttft_ms_p99", "TTFT p99 ms"), ("tpot_ms_p50", "TPOT p50 ms"),
           ("tpot_ms_p99", "TPOT p99 ms"), ("itl_ms_p99", "ITL p99 ms"), ("e2e_ms_p99", "E2E p99 ms"),
           ("joules_per_token", "J/token"), ("usd_per_million_tokens_at_slo", "cloud $/M tok at SLO"),
           ("failed", "failed")]
OWN_COLUMNS = [("lengths", "lengths"), ("gpu", "GPU"), ("engine", "engine"), ("shape", "shape"), ("batch", "batch"),
               ("output_tokens_per_s", "output tok/s"), ("ttft_ms", "TTFT ms"), ("tpot_ms_p50", "TPOT p50 ms"),
               ("tpot_ms_p99", "TPOT p99 ms"), ("joules_per_token", "J/token")]
OWN_TITLE = "gpuarena's own decode loop (llm-serve) at the same lengths"
OWN_NOTE = ("batch B beside a served engine at concurrency B; every sequence of a batch starts together (TTFT: "
            "the prefill of the whole batch); output tok/s: generated tokens over whole requests")


def render(rows: list[EngineRow], fmt: str, own: list[OwnLoopRow] | None = None,
           curves: list[Curve] | None = None) -> str:
    if fmt == "json":
        return as_json({"rows": [r.model_dump(mode="json") for r in rows],
                        "own_loop": [x.model_dump(mode="json") for x in own or []],
                        "frontier": [c.model_dump(mode="json") for c in curves or []]})
    shown = [{**r.model_dump(), "rate": "all at once" if r.rate in (None, float("inf")) else r.rate} for r in rows]
    text = table(COLUMNS, shown, fmt, title="Served engines, like for like", notes=[
        "one group per setting (model, API, lengths, arrivals, SLOs); metrics as vLLM's benchmark_serving "
        "defines them; goodput: requests within both SLOs per second; $/M tok at SLO: the catalog's cloud "
        "price per GPU-hour over the output tokens of those requests"])
    if own:
        text += "\n" + table(OWN_COLUMNS, [x.model_dump() for x in own], fmt, title=OWN_TITLE, notes=[OWN_NOTE])
    if curves:
        text += "\nServing frontier (output tokens/s per GPU against tokens/s per user = 1000 / TPOT p50):\n"
        text += "".join(f"- {inert(x) if fmt == 'md' else x}\n" for x in lines(curves))
    return text
