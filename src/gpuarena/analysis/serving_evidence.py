"""Published serving figures as evidence of the shares an engine reaches (issue 39).

Each row of data/serving_evidence.csv (MLPerf Inference, TensorRT-LLM's tables and launch blog) is
set in the serving model (serving_model.py) at its own conditions, with no communication (as the
bounds), and gives the least share it must have reached:

- a time to the first token: the prefill MFU that makes the model's prefill that fast;
- a throughput: the prefill MFU needed if decode read memory at the full datasheet bandwidth, and
  the decode bandwidth share needed if prefill ran at the full dense peak.  Each is a floor: the
  engine reached at least that much of one while the other was at most its physical limit.

The best floor per weight precision (bf16 and fp16 alike) is a ceiling credibly reached, beside
gpuarena's own measurements and gpt-fast's: gpuarena's engine is one engine, not the definition of
credible.  A row the model cannot reproduce even at the physical bound is refused by the tests
(tests/analysis/test_serving_evidence.py), since it would mean the model or the row is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from gpuarena.analysis import serving_model as M
from gpuarena.data import catalog, evidence
from gpuarena.workloads.llm.shapes import resolve_shape

STEPS = 40      # bisection steps: a share to 1e-12


@dataclass(frozen=True)
class Floor:
    """The shares one published figure implies (None where the row says nothing of one)."""
    row: evidence.ServingFigure
    prefill_mfu: float | None
    decode_share: float | None
    within_bound: bool          # the figure is reachable at the datasheet bandwidth and the dense peak

    def text(self) -> str:
        r = self.row
        what = (f"{r.tokens_per_s_per_gpu:,.0f} tokens/s per GPU at {r.prompt_len or 1}+{r.new_tokens}"
                if r.ttft_s is None else f"TTFT {r.ttft_s * 1e3:g} ms at {r.prompt_len} tokens")
        return f"{r.engine}, {catalog.match(r.gpu).short} {r.model} {r.precision} TP{r.tp}, {what}"


def _least(fast_enough, lo: float = 1e-6) -> float | None:
    """The least x in (0, 1] with fast_enough(x) (monotone in x), or None where even 1 is not."""
    if not fast_enough(1.0):
        return None
    hi = 1.0
    for _ in range(STEPS):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if fast_enough(mid) else (mid, hi)
    return hi


def floor(row: evidence.ServingFigure) -> Floor:
    cfg, g = resolve_shape(row.model), catalog.match(row.gpu)
    kv = 1 if row.precision == "fp8" else 2        # FP8 engines keep the KV cache in FP8
    prompt = row.prompt_len or 1
    if row.ttft_s is not None:
        batch = row.batch_size or 1
        mfu = _least(lambda x: M.prefill_s(cfg, g, row.precision, row.tp, batch, prompt, x, 1.0, None) <= row.ttft_s)
        return Floor(row, mfu, None, mfu is not None)
    out = row.new_tokens
    batch = row.batch_size or max(1, M.max_batch(cfg, g, row.precision, row.tp, prompt + out, 0.0, kv))
    target = row.tokens_per_s_per_gpu * row.tp          # one copy's tokens/s

    def speed(share: float, mfu: float) -> float:
        return M.request(cfg, g, row.precision, row.tp, batch, prompt, out, share, mfu, None, kv)["tokens_per_s"]
    mfu = _least(lambda x: speed(1.0, x) >= target)
    share = _least(lambda x: speed(x, 1.0) >= target)
    return Floor(row, mfu, share, mfu is not None and share is not None)


@lru_cache(maxsize=None)
def floors() -> tuple[Floor, ...]:
    return tuple(floor(r) for r in evidence.serving_figures())


def _kind(precision: str) -> str:
    return "bf16" if precision in ("bf16", "fp16") else precision


def best(precision: str, which: str) -> tuple[float, str] | None:
    """The highest floor of ``which`` ("prefill_mfu" or "decode_share") among published figures with
    weights of this precision (bf16 and fp16 alike), and where it came from; None where none."""
    got = [(getattr(f, which), f) for f in floors() if f.within_bound and getattr(f, which) is not None
           and _kind(f.row.precision) == _kind(precision)]
    if not got:
        return None
    x, f = max(got, key=lambda t: t[0])
    return x, f"published: {f.text()} ({f.row.source.split(' (')[0]})"

