"""The quantisation rungs' facts (torch-free): their names, documentation, the variant rules they
add and the precision they run at.  quant.py (torch) applies them; a spec imports this module."""

from __future__ import annotations

from gpuarena.errors import UserError

RUNGS = ("int8-weights", "int8-dynamic", "fp8-dynamic")
TORCHAO_ACCURACY = ("pytorch/ao docs/source/workflows/inference.md (commit 03706c1e), Llama-3.1-8B, "
                    "lm-eval wikitext perplexity, bf16 7.3315")
ACCURACY_NOTES = {
    "int8-weights": "perplexity 7.3451 (+0.2%)",
    "int8-dynamic": "perplexity 7.4535 (+1.7%)",
    "fp8-dynamic": "perplexity 7.4197 (+1.2%)",
}
VARIANT_DOCS = {
    "int8-weights": "torchao Int8WeightOnlyConfig: int8 weights per channel, math in the model's dtype; "
                    "accuracy (torchao, Llama-3.1-8B): " + ACCURACY_NOTES["int8-weights"]
                    + "; measured here: extra.accuracy",
    "int8-dynamic": "torchao Int8DynamicActivationInt8WeightConfig: int8 weights per channel, activations int8 "
                    "per token at run time, int8 tensor-core matmuls; accuracy (torchao, Llama-3.1-8B): "
                    + ACCURACY_NOTES["int8-dynamic"] + "; measured here: extra.accuracy",
    "fp8-dynamic": "torchao Float8DynamicActivationFloat8WeightConfig, row-wise scales: float8 weights and "
                   "activations on sm_89+ tensor cores, needs bf16; accuracy (torchao, Llama-3.1-8B): "
                   + ACCURACY_NOTES["fp8-dynamic"] + "; measured here: extra.accuracy; skipped without "
                   "torchao or on a GPU below sm_89 or a CPU",
}
TORCHAO_HINT = "pip install 'gpuarena[quant]' (torchao)"


def rung_of(variants) -> str | None:
    return next((r for r in RUNGS if r in variants), None)


def precision_name(variants, base: str) -> str:
    """The stored precision: the dynamic rungs' matmuls run in int8 / fp8; weight-only keeps its math."""
    rung = rung_of(variants)
    return {"int8-dynamic": "int8", "fp8-dynamic": "fp8"}.get(rung or "", base)


def check_rungs(workload: str, chosen: frozenset[str]) -> None:
    """The variant rules a rung adds to its workload's own (UserError: one line, nothing run)."""
    rung = rung_of(chosen)
    if rung is None:
        return
    amp = sorted(v for v in chosen if v.startswith("amp-"))
    if amp:
        raise UserError(f"{rung} of {workload} quantises cast weights, not autocast: "
                        f"use {amp[0].removeprefix('amp-')} instead of {amp[0]}")
    if rung == "fp8-dynamic" and "bf16" not in chosen:
        raise UserError(f"fp8-dynamic of {workload} quantises bfloat16 weights (torchao's row-wise scales): "
                        "add bf16, e.g. bf16+compile+fp8-dynamic")


class QuantRungs:
    """Mixin for a workload class with the rungs among its variants: their rules at parse time, and
    the precision a dynamic rung's matmuls run at (the rest of the model keeps its own)."""

    @classmethod
    def parse_variant(cls, spec: str) -> frozenset[str]:
        chosen = super().parse_variant(spec)
        check_rungs(cls.name, chosen)
        return chosen

    @classmethod
    def executed_precision(cls, variants, arch: str | None, params: dict | None = None) -> dict[str, str]:
        ex = super().executed_precision(frozenset(variants), arch, params)
        return {**ex, "matmul": precision_name(variants, ex["matmul"])}

    def precision(self) -> str:
        return precision_name(self.ctx.variants, super().precision())
