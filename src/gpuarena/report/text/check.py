"""`gpuarena check` as text: each claim as stated, the precision it executed as, the TFLOP/s it
implies against the peak, and the verdict with its reason."""

from __future__ import annotations

from gpuarena.analysis.rows.precision import NAMES
from gpuarena.report.text.table import as_json, render as table

COLUMNS = [("gpu", "GPU"), ("workload", "workload"), ("precision", "stated"), ("executed", "executed"),
           ("batch_size", "batch"), ("conditions", "conditions"), ("claim", "claimed"),
           ("implied_tflops", "implied TFLOP/s"), ("peak_tflops", "peak"), ("share", "share of peak"),
           ("verdict", "verdict"), ("reason", "reason")]


def _conditions(r: dict) -> str:
    p = r["params"]
    parts = [f"{k}={p[k]}" for k in ("seq_len", "image_size", "inference_steps") if k in p]
    return ", ".join(parts + ([f"gpus={r['gpus']}"] if r["gpus"] > 1 else [])
                     + ([f"replicas={r['replicas']}"] if (r.get("replicas") or 1) > 1 else []))


def _claim(r: dict) -> str:
    if r.get("claim_text"):     # a micro-benchmark's figure in its own unit (analysis/physics/micro_check.py)
        return r["claim_text"]
    if r.get("scaling") is not None:
        return f"scaling {r['scaling']:.2f}"
    if r.get("latency") is not None:
        return f"{r['latency']:g} s/item"
    return f"{r['throughput']:,.1f}/s"


def render(rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return as_json(rows)
    shown = [{**r, "share": f"{r['share_of_peak']:.0%}" if r.get("share_of_peak") is not None else "",
              "executed": NAMES.get(r["executed"], r["executed"]), "conditions": _conditions(r), "claim": _claim(r),
              "gpu": r["gpu"].replace("NVIDIA ", "")} for r in rows]
    return table(COLUMNS, shown, fmt, title="Claims judged as stated (precision as executed)")
