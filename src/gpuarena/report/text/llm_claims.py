"""`gpuarena check -w llm-train` and `whatif -w llm-train` as text: article 001's 175B claims
against the memory and time model, and a training plan's layouts."""

from __future__ import annotations

from gpuarena.analysis.physics.llm_advice import RankedPlan, Ranking
from gpuarena.analysis.physics.llm_claims import MFU, MODEL, TOKENS, ArticleClaims
from gpuarena.analysis.physics.llm_plan import Plan, PlanRow
from gpuarena.report.text.table import as_json, render as table

COLUMNS = [("claim", "claim"), ("model_text", "the model says"), ("verdict", "verdict"), ("reason", "why")]
PLAN_COLUMNS = [("checkpointing", "checkpointing"), ("layout", "TP x PP x DP (micro)"), ("memory_gb", "GB per GPU"),
                ("fits", "fits"), ("largest_micro_batch", "largest micro-batch"), ("compute_days", "compute days"),
                ("comm", "comm s/step (TP, DP, PP)"), ("mfu", "MFU"), ("days", "days (band)")]


def render(claims: ArticleClaims, fmt: str) -> str:
    """The claims analysis.llm_claims.judge() returns, as text."""
    if fmt == "json":
        return as_json(claims)
    return table(COLUMNS, [c.model_dump() for c in claims], fmt,
                 title="Article 001's 175B claims against the memory and time model",
                 notes=[f"model: analysis/physics/llm_plan.py, {MODEL}, {TOKENS:.0e} tokens, "
                        f"the same MFU ({MFU}) on both cards"])


def _days(r: PlanRow | RankedPlan) -> str:
    if r.days is None:
        return "no duration: does not fit"
    band = (f" ({r.days_low:,.0f}-{r.days_high:,.0f})" if r.days_low is not None
            and r.days_high - r.days_low > 0.5 else "")
    return f"{r.days:,.0f}{band}"


def _plan_row(r: PlanRow, p: Plan) -> dict:
    return {"checkpointing": "full" if r.checkpointing else "none", "layout": _layout(r.layout),
            "memory_gb": r.memory["total"] / 1e9, "fits": "yes" if r.fits else "NO",
            "largest_micro_batch": r.largest_micro_batch,
            "compute_days": "-" if r.compute_only_days is None else f"{r.compute_only_days:,.0f}",
            "comm": (f"{r.tp_comm_s:.2f}, {r.dp_comm_s:.2f}, {r.pp_comm_s:.3f}" if p.mfu is None
                     else f"inside the MFU; links {r.traffic_s:.2f} s/step"), "mfu": f"{r.mfu:.3f}",
            "days": _days(r)}


def render_plan(p: Plan | dict, fmt: str) -> str:
    """One training plan (analysis.llm_plan) as text; json of it, or of any dict of plans, as it is."""
    if fmt == "json":
        return as_json(p)
    rows = [_plan_row(r, p) for r in p.rows]
    notes = [f"{k}: {v}" for k, v in p.assumptions.items()]
    notes += [f"{'no ' if r.checkpointing is False else 'full '}checkpointing: {r.why}" for r in p.rows if r.why]
    mfu = f"MFU {p.mfu:.3f} ({p.mfu_from})" if p.mfu is not None else "no MFU given: the breakdown"
    title = (f"What if: {p.model} ({p.params / 1e9:.0f}B), {p.tokens:.3g} tokens on {p.n} x {p.gpu}, "
             f"{mfu}, {p.precision}")
    return table(PLAN_COLUMNS, rows, fmt, title=title, notes=notes)


RANK_COLUMNS = [("rank", "#"), ("gpu", "GPU"), ("days", "days (band)"), ("mfu", "MFU"), ("usd", "$"),
                ("memory", "GB per GPU needed / has"), ("layout", "TP x PP x DP (micro)")]


def _layout(lay: dict) -> str:
    """'8 x 1 x 8 (1)': TP x PP x DP (FSDP) and the micro-batch."""
    return (f"{lay['tp']} x {lay['pp']} x {lay['dp']}" + (" FSDP" if lay.get("zero3") else "")
            + f" ({lay['micro_batch']})")


def render_ranking(out: Ranking, fmt: str) -> str:
    """advise -w llm-train (analysis.llm_advice.rank) as text; json as it is."""
    if fmt == "json":
        return as_json(out)
    rows = [{"rank": r.rank, "gpu": r.gpu, "days": _days(r), "mfu": f"{r.mfu:.3f}",
             "usd": "unpriced" if r.usd is None else f"{r.usd:,.0f}",
             "memory": f"{r.memory_gb:.0f} / {r.gpu_memory_gb:g}", "layout": _layout(r.layout)} for r in out.rows]
    price = "cloud: days x 24 x GPUs x $/GPU-hour" if out.basis == "cloud" else "purchase: GPUs x $ per GPU"
    by: dict[str, list[str]] = {}
    for r in out.rows:
        by.setdefault(r.mfu_from, []).append(r.gpu.removeprefix("NVIDIA "))
    notes = [f"MFU of {', '.join(gpus)}: {src}" for src, gpus in by.items()]
    notes += [f"left out: {x.gpu}: {x.reason}" for x in out.excluded]
    title = (f"Training {out.model} on {out.gpus} GPUs, {out.tokens:.3g} tokens of {out.seq_len}, "
             f"{out.precision}; $ on the {price} basis")
    return table(RANK_COLUMNS, rows, fmt, title=title, notes=notes)
