"""training_mfu.csv, typed: published decoder-training throughputs (torchtitan, Megatron-LM, the
Llama 2 paper), each with the GPU, GPU count, model shape, sequence length, precision and layout
its source states, and the source itself.  analysis/physics/llm_efficiency.py turns each into an MFU (by
gpuarena's own FLOP count, over the catalog's peak) and plans and judges LLM training by them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from pathlib import Path

from gpuarena.data.evidence import DATA, _needed, _number, _rows, _text
from gpuarena.errors import UserError

TRAINING_CSV = DATA / "training_mfu.csv"
RECOMPUTE = ("", "none", "selective", "full")


@dataclass(frozen=True, slots=True)
class TrainingRun:
    """One published training throughput, as its source states it."""
    gpu: str
    gpus: int | None            # None where the source states no count (the Llama 2 paper)
    model: str                  # a planning shape (analysis/physics/llm_plan.py PLAN_SHAPES)
    seq_len: int
    precision: str              # bf16, fp16 or fp8 (the linears' precision)
    tokens_per_gpu_s: float
    recompute: str              # none, selective, full, or "" where not stated
    layout: str
    engine: str
    source: str
    date: str
    note: str


@functools.lru_cache(maxsize=2)
def training_runs(path: str | Path | None = None) -> tuple[TrainingRun, ...]:
    """The published training runs; UserError naming the line of the first malformed row."""
    p = Path(path or TRAINING_CSV)
    out = []
    for line, row in _rows(p, "training runs", tuple(f.name for f in fields(TrainingRun))):
        where = f"{p.name} line {line}"
        if row["recompute"] not in RECOMPUTE:
            raise UserError(f"{where}: recompute {row['recompute']!r} is not one of {', '.join(RECOMPUTE[1:])}")
        if row["precision"] not in ("bf16", "fp16", "fp8"):
            raise UserError(f"{where}: precision {row['precision']!r} is not bf16, fp16 or fp8")
        t = {k: _text(row, k, where) for k in ("gpu", "model", "precision", "layout", "engine", "source", "date")}
        out.append(TrainingRun(**t, gpus=_number(row, "gpus", where, int), seq_len=_needed(row, "seq_len", where, int),
                               tokens_per_gpu_s=_needed(row, "tokens_per_gpu_s", where), recompute=row["recompute"],
                               note=row["note"]))
    return tuple(out)
