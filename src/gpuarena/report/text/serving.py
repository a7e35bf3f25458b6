"""`gpuarena advise -w llm-serve` as text: the GPUs ranked for serving one model at one prompt
and output length, with the explanation and the cards left out."""

from __future__ import annotations

from gpuarena.analysis.verbs.serving import ServingAdvice
from gpuarena.report.text.table import as_json, render as table

COLUMNS = [("rank", "#"), ("gpu", "GPU"), ("memory_gb", "GB"), ("bandwidth_gbs", "GB/s"),
           ("max_batch", "max sequences"), ("batch", "batch"), ("tokens_per_s", "tokens/s"), ("ttft_s", "TTFT s"),
           ("tpot_ms", "ms/token"), ("bound", "bound"), ("tokens_per_s_batch1", "tokens/s at 1"),
           ("usd_per_hour", "cloud $/h"), ("tokens_per_usd", "tokens per $"), ("note", "note")]


def render(result: ServingAdvice, fmt: str) -> str:
    if fmt == "json":
        return as_json(result)
    notes = [result.explanation] + [f"not ranked: {e.gpu}: {e.reason}" for e in result.excluded]
    return table(COLUMNS, [r.model_dump() for r in result.rows], fmt, notes=notes,
                 title=f"GPUs for serving {result.model} ({result.precision} weights): {result.prompt:,} + "
                       f"{result.output:,} tokens"
                 + (f" on {result.gpus} GPUs each" if result.gpus > 1 else "")
                 + (f", within {result.slo_ms:g} ms per output token" if result.slo_ms else ""))
