"""Published serving figures (data/serving_evidence.csv), typed and checked as data/evidence.py
loads the other evidence: MLPerf Inference per-GPU figures, TensorRT-LLM's reference tables and H200
launch blog, each with the conditions its source states and the source itself.  The shares they
imply are analysis/physics/serving_evidence.py's."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from gpuarena.data.evidence import DATA, _needed, _number, _rows, _text
from gpuarena.errors import UserError

SERVING_CSV = DATA / "serving_evidence.csv"
SERVING_PRECISIONS = ("bf16", "fp16", "fp8")    # the engines' weights; KV cache in FP8 with FP8 weights


@dataclass(frozen=True, slots=True)
class ServingFigure:
    """One published serving figure (MLPerf Inference, TensorRT-LLM's tables and blogs) as its source
    states it: output tokens/s per GPU at a batch and lengths, or the time to the first token of one
    prompt.  The evidence analysis/physics/serving_evidence.py turns into the shares credibly reached (every
    row must lie within the serving model's physical bound: tests/analysis/test_serving_claims.py)."""
    gpu: str                    # as the catalog matches it
    engine: str
    model: str                  # an LLM shape (workloads/llm/shapes.py SHAPES)
    precision: str              # the weights': bf16, fp16 or fp8
    tp: int                     # tensor-parallel GPUs per copy of the model
    batch_size: int | None      # the engine's batch; None where the source states none
    prompt_len: int | None      # None where the source gives no input length (then 1 token: a floor)
    new_tokens: int | None      # output tokens per request (throughput rows)
    tokens_per_s_per_gpu: float | None
    ttft_s: float | None        # seconds to the first token (batch-1 rows)
    source: str
    date: str


def serving_figures(path: str | Path | None = None) -> tuple[ServingFigure, ...]:
    """The published serving figures, typed; UserError naming the line of the first malformed row."""
    p = Path(path or SERVING_CSV)
    out = []
    for line, row in _rows(p, "serving evidence", tuple(f.name for f in fields(ServingFigure))):
        where = f"{p.name} line {line}"
        t = {k: _text(row, k, where) for k in ("gpu", "engine", "model", "precision", "source", "date")}
        if t["precision"] not in SERVING_PRECISIONS:
            raise UserError(f"{where}: precision {t['precision']!r} is not one of {', '.join(SERVING_PRECISIONS)}")
        n = {k: _number(row, k, where, int) for k in ("batch_size", "prompt_len", "new_tokens")}
        x = {k: _number(row, k, where) for k in ("tokens_per_s_per_gpu", "ttft_s")}
        if (x["tokens_per_s_per_gpu"] is None) == (x["ttft_s"] is None):
            raise UserError(f"{where}: give either tokens_per_s_per_gpu (with new_tokens) or ttft_s (with prompt_len)")
        if x["tokens_per_s_per_gpu"] is not None and n["new_tokens"] is None:
            raise UserError(f"{where}: a throughput row needs new_tokens")
        if x["ttft_s"] is not None and n["prompt_len"] is None:
            raise UserError(f"{where}: a time-to-first-token row needs prompt_len")
        out.append(ServingFigure(**t, tp=_needed(row, "tp", where, int), **n, **x))
    return tuple(out)
