"""`gpuarena check` as text: each claim as stated, the precision it executed as, the TFLOP/s it
implies against the peak, and the verdict with its reason."""

from __future__ import annotations

from gpuarena.analysis.rows.precision import NAMES
from gpuarena.analysis.verbs.check import Check, ClaimRow
from gpuarena.report.text.table import as_json, render as table

COLUMNS = [("gpu", "GPU"), ("workload", "workload"), ("precision", "stated"), ("executed", "executed"),
           ("batch_size", "batch"), ("conditions", "conditions"), ("claim", "claimed"),
           ("implied_tflops", "implied TFLOP/s"), ("peak_tflops", "peak"), ("share", "share of peak"),
           ("verdict", "verdict"), ("reason", "reason")]


def _conditions(r: ClaimRow) -> str:
    p = r.params
    parts = [f"{k}={p[k]}" for k in ("seq_len", "image_size", "inference_steps") if k in p]
    return ", ".join(parts + ([f"gpus={r.gpus}"] if r.gpus > 1 else [])
                     + ([f"replicas={r.replicas}"] if (r.replicas or 1) > 1 else []))


def _claim(r: ClaimRow) -> str:
    if r.claim_text:     # a micro-benchmark's figure in its own unit (analysis/physics/micro_check.py)
        return r.claim_text
    if r.scaling is not None:
        return f"scaling {r.scaling:.2f}"
    if r.latency is not None:
        return f"{r.latency:g} s/item"
    return f"{r.throughput:,.1f}/s"


def render(rows: Check, fmt: str) -> str:
    if fmt == "json":
        return as_json(rows)
    shown = [{**r.model_dump(), "share": f"{r.share_of_peak:.0%}" if r.share_of_peak is not None else "",
              "executed": NAMES.get(r.executed, r.executed), "conditions": _conditions(r), "claim": _claim(r),
              "gpu": r.gpu.replace("NVIDIA ", "")} for r in rows]
    return table(COLUMNS, shown, fmt, title="Claims judged as stated (precision as executed)")
