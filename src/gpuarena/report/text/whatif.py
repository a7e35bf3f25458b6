"""`gpuarena whatif` as text: predicted data-parallel scaling per GPU count, with where the
compute time, bus bandwidth and overlap came from."""

from __future__ import annotations

from gpuarena.analysis.physics.interconnect import mib_text
from gpuarena.analysis.physics.whatif import WhatIf
from gpuarena.report.text.table import as_json, render as table

COLUMNS = [("n", "GPUs"), ("busbw", "busbw GB/s"), ("compute_ms", "compute ms"), ("comm_ms", "all-reduce ms"),
           ("exposed_ms", "exposed ms"), ("step_ms", "step ms"), ("efficiency", "eff. vs own 1-GPU step"),
           ("vs_plain", "eff. vs plain 1-GPU step"), ("throughput", "items/s")]


def render(result: WhatIf, fmt: str) -> str:
    """What analysis.whatif.predict() returns, as text."""
    if fmt == "json":
        return as_json(result)
    rows = [{**r.model_dump(), "busbw": f"{r.busbw_gbs:.0f}", "compute_ms": result.compute_s * 1e3,
             "comm_ms": r.comm_s * 1e3, "exposed_ms": r.exposed_s * 1e3, "step_ms": r.step_s * 1e3,
             "efficiency": f"{r.efficiency:.3f}",
             "vs_plain": f"{r.efficiency_vs_plain:.3f}" if r.efficiency_vs_plain
             else result.vs_plain_missing or "not measured"}
            for r in result.rows]
    notes = [f"gradients {result.grad_bytes / 1e6:.0f} MB all-reduced in {mib_text(result.message_bytes)} "
             f"messages; batch {result.batch_size} per GPU ({result.batch_from})"
             + (f", {result.accum_steps} micro-batches per all-reduce and per optimizer step (the plain "
                "1-GPU step takes one per batch: not like for like)" if result.accum_steps > 1 else ""),
             f"compute from {result.compute_from}",
             f"busbw from {result.busbw_from}",
             f"overlap {result.overlap:.2f} from {result.overlap_from}"]
    return table(COLUMNS, rows, fmt, title=f"What if: {result.workload} on N x {result.gpu}", notes=notes)
