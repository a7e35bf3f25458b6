"""The report's llm-train section: tokens/s, tokens/s per GPU, MFU and the parallel scaling.

MFU is analysis/rows/mfu.py's, computed when read (achieved model TFLOP/s per GPU over the
catalog's dense peak for the executed precision); for FP8 the share of the bf16 peak stands
beside it, since FP8 MFU is often quoted that way.
"""

from __future__ import annotations

from gpuarena.analysis.physics import models
from gpuarena.analysis.rows.mfu import mfu as mfu_of
from gpuarena.analysis.rows.mfu import mfu_vs_bf16
from gpuarena.report.model import NUMERIC, TEXT, Section, Table, device_of, ok, pct
from gpuarena.numbers import fmt_bytes, fmt_num
from gpuarena.store.result import Result


def _ms(x) -> str:
    return f"{x * 1e3:.1f}" if isinstance(x, (int, float)) else "-"


def llm_section(rows: list[Result]) -> Section | None:
    mine = [r for r in rows if models.DECODER_TRAINING.judges(r.workload) and ok(r)]
    if not mine:
        return None
    s = Section("decoder-training", "LLM training: tokens/s, MFU and scaling")
    s.paragraphs.append(
        "MFU: model FLOPs per token (6 x non-embedding parameters + 12 x layers x hidden x sequence length) "
        "x tokens/s per GPU, over the catalog's dense peak for the executed precision (FP8 for the fp8 "
        "recipe, whose share of the bf16 peak is shown beside it). Exposed communication: the profiler's "
        "communication time during which no compute ran, per step. Scaling: tokens/s per GPU against the "
        "same recipe on one GPU of the same run.")
    table = []
    for r in sorted(mine, key=lambda r: (device_of(r), r.params.get("shape", ""), r.gpus)):
        e, p = r.extra, r.params
        mfu = mfu_of(r)
        bf16 = mfu_vs_bf16(r) if r.precision == "fp8" else None
        both = e.loss_first is not None and e.loss_last is not None
        loss = f"{e.loss_first:.2f} / {e.loss_last:.2f}" if both else "-"
        table.append([str(r.id), device_of(r), e.shape or p.get("shape", "-"), r.variant,
                      f"{p.get('parallel', '-')} {'x'.join(map(str, e.mesh_shape or [1]))}",
                      str(p.get("batch_size", "-")), str(p.get("seq_len", "-")),
                      fmt_num(r.throughput_median), fmt_num(e.tokens_per_s_per_gpu),
                      pct(mfu) + (f" ({pct(bf16)} of bf16)" if bf16 is not None else ""),
                      fmt_bytes(r.peak_memory_bytes) if r.peak_memory_bytes else "-",
                      _ms(e.comm_exposed_s), pct(r.derived.scaling_efficiency), loss])
    s.tables.append(Table("llm-train-table", [
        ("result", NUMERIC), ("device", TEXT), ("shape", TEXT), ("variant", TEXT), ("layout", TEXT),
        ("batch/rank", NUMERIC), ("seq", NUMERIC), ("tokens/s", NUMERIC), ("tokens/s per GPU", NUMERIC),
        ("MFU", NUMERIC), ("peak memory", NUMERIC), ("exposed comm ms/step", NUMERIC),
        ("scaling efficiency", NUMERIC), ("loss first / last", TEXT)], table, "llm-train results",
        details=("peak memory", "exposed comm ms/step", "loss first / last", "tokens/s")))
    return s
