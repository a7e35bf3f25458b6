"""`gpuarena check -w llm-train` and `whatif -w llm-train` as text: article 001's 175B claims
against the memory and time model, and a training plan's layouts."""

from __future__ import annotations

from gpuarena.analysis.llm_claims import MFU, MODEL, TOKENS
from gpuarena.report.text.table import as_json, render as table

COLUMNS = [("claim", "claim"), ("model_text", "the model says"), ("verdict", "verdict"), ("reason", "why")]
PLAN_COLUMNS = [("checkpointing", "checkpointing"), ("layout", "TP x PP x DP (micro)"), ("memory_gb", "GB per GPU"),
                ("fits", "fits"), ("largest_micro_batch", "largest micro-batch"), ("compute_days", "compute days"),
                ("comm", "comm s/step (TP, DP, PP)"), ("mfu", "MFU"), ("days", "days")]


def render(rows: list[dict], fmt: str) -> str:
    """The claims analysis.llm_claims.judge() returns, as text."""
    return table(COLUMNS, rows, fmt, title="Article 001's 175B claims against the memory and time model",
                 notes=[f"model: analysis/llm_plan.py, {MODEL}, {TOKENS:.0e} tokens, "
                        f"the same MFU ({MFU}) on both cards"])


def _plan_row(r: dict, p: dict) -> dict:
    return {"checkpointing": "full" if r["checkpointing"] else "none",
            "layout": f"{r['layout']['tp']} x {r['layout']['pp']} x {r['layout']['dp']}"
                      + (" FSDP" if r["layout"].get("zero3") else "") + f" ({r['layout']['micro_batch']})",
            "memory_gb": r["memory"]["total"] / 1e9, "fits": "yes" if r["fits"] else "NO",
            "largest_micro_batch": r["largest_micro_batch"], "compute_days": r["compute_only_days"],
            "comm": (f"{r['tp_comm_s']:.2f}, {r['dp_comm_s']:.2f}, {r['pp_comm_s']:.3f}" if p["mfu"] is None
                     else "inside the MFU"), "mfu": f"{r['mfu']:.3f}", "days": r["days"]}


def render_plan(p: dict, fmt: str) -> str:
    """One training plan (analysis.llm_plan) as text; json of any dict as it is."""
    if fmt == "json":
        return as_json(p)
    rows = [_plan_row(r, p) for r in p["rows"]]
    notes = [f"{k}: {v}" for k, v in p["assumptions"].items()]
    mfu = f"MFU {p['mfu']:.2f} ({p['mfu_from']})" if p["mfu"] is not None else "no MFU given: the breakdown"
    title = (f"What if: {p['model']} ({p['params'] / 1e9:.0f}B), {p['tokens']:.3g} tokens on {p['n']} x {p['gpu']}, "
             f"{mfu}, {p['precision']}")
    return table(PLAN_COLUMNS, rows, fmt, title=title, notes=notes)
