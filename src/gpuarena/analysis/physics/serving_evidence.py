"""Published serving figures as evidence of the shares an engine reaches (issue 39).

Each row of data/serving_evidence.csv (MLPerf Inference, TensorRT-LLM's tables and launch blog) is
set in the serving model (serving_model.py) at its own conditions against the physical bound
(datasheet bandwidth, dense peak, no communication).  Every time in the model is a bytes term over
bandwidth x decode share or a FLOPs term over peak x prefill MFU, so with both shares at e the whole
request takes the bound's time / e: a figure at e of its physical bound was reached with both shares
at e, one point the engine demonstrably reached.  e is then a credible decode share and prefill MFU
(a time to the first token: a credible prefill MFU only).

The best e per weight precision (bf16 and fp16 alike) is a ceiling credibly reached, beside
gpuarena's own measurements and gpt-fast's: gpuarena's engine is one engine, not the definition of
credible.  A row above its own physical bound (e > 1) would mean the model or the row is wrong; the
tests refuse it (tests/analysis/test_serving_claims.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from gpuarena.analysis.physics import serving_model as M
from gpuarena.data import catalog
from gpuarena.data import serving_figures as evidence
from gpuarena.store.result import Result
from gpuarena.workloads.llm.shapes import resolve_shape


@dataclass(frozen=True)
class Reached:
    """The share of its physical bound one published figure reached."""
    row: evidence.ServingFigure
    efficiency: float           # bound time / published time (> 1: above the bound)
    bound: float                # the bound: tokens/s per GPU, or the least TTFT in s

    @property
    def prefill_mfu(self) -> float:
        return self.efficiency

    @property
    def decode_share(self) -> float | None:
        return None if self.row.ttft_s is not None else self.efficiency

    def text(self) -> str:
        r = self.row
        what = (f"{r.tokens_per_s_per_gpu:,.0f} tokens/s per GPU at {r.prompt_len or 1}+{r.new_tokens}"
                if r.ttft_s is None else f"TTFT {r.ttft_s * 1e3:g} ms at {r.prompt_len} tokens")
        return (f"{r.engine}, {catalog.match(r.gpu).short} {r.model} {r.precision} TP{r.tp}, {what}: "
                f"{self.efficiency:.0%} of its physical bound")


def reached(row: evidence.ServingFigure) -> Reached:
    cfg, g = resolve_shape(row.model), catalog.match(row.gpu)
    kv = 1 if row.precision == "fp8" else 2        # FP8 engines keep the KV cache in FP8
    prompt = row.prompt_len or 1                   # no input length given: 1 token, the least work (a floor)
    if row.ttft_s is not None:
        least = M.prefill_s(cfg, g, row.precision, row.tp, row.batch_size or 1, prompt, 1.0, 1.0, None)
        return Reached(row, least / row.ttft_s, least)
    out = row.new_tokens
    batch = row.batch_size or max(1, M.max_batch(cfg, g, row.precision, row.tp, prompt + out, 0.0, kv))
    bound = M.upper_bound(cfg, g, row.precision, row.tp, batch, prompt, out, kv)["tokens_per_s"] / row.tp
    return Reached(row, row.tokens_per_s_per_gpu / bound, bound)


@lru_cache(maxsize=None)
def all_reached() -> tuple[Reached, ...]:
    return tuple(reached(r) for r in evidence.serving_figures())


def _kind(precision: str) -> str:
    return "bf16" if precision in ("bf16", "fp16") else precision


def best(precision: str, which: str) -> tuple[float, str] | None:
    """The highest share of ``which`` ("prefill_mfu" or "decode_share") published figures with weights
    of this precision (bf16 and fp16 alike) reached within their bound, and where; None where none."""
    got = [(getattr(f, which), f) for f in all_reached() if f.efficiency <= 1 and getattr(f, which) is not None
           and _kind(f.row.precision) == _kind(precision)]
    if not got:
        return None
    x, f = max(got, key=lambda t: t[0])
    return x, f"published: {f.text()} ({f.row.source.split(' (')[0]})"


def ceiling(results: list[Result], precision: str = "bf16") -> M.Shares:
    """The best shares credibly reached at this weight precision: gpuarena's measured ones, gpt-fast's
    and those published serving figures imply (above: MLPerf Inference, TensorRT-LLM),
    whichever is highest."""
    s = M.shares(results, precision)
    dec = max([(s.decode, s.decode_from), M.CEILINGS.get(precision, M.DECODE_CEILING),
               *([x] if (x := best(precision, "decode_share")) else [])], key=lambda t: t[0])
    pre = max([(s.prefill, s.prefill_from), M.DEFAULT_PREFILL_MFU,
               *([x] if (x := best(precision, "prefill_mfu")) else [])], key=lambda t: t[0])
    return M.Shares(min(dec[0], 1.0), dec[1], min(pre[0], 1.0), pre[1])
