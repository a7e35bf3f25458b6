"""`gpuarena whatif -w llm-train`: the large-model memory and time plan (analysis/llm_plan.py)."""

from __future__ import annotations

from gpuarena.errors import UserError

DEFAULT_MFU = 0.4


def whatif_llm(model: str | None, tokens: float | None, gpu: str, counts: list[int], mfu: str | None,
               variant: str | None, store, fmt: str) -> str:
    from gpuarena.analysis import llm_claims, llm_plan

    from gpuarena.safeio import finite
    from gpuarena.workloads import registry

    if variant:
        registry.get("llm-train").parse_variant(variant)   # an unknown variant: one line, not ignored
    finite(tokens, "--tokens", cap=1e18)
    precision = "fp8" if variant and "fp8" in variant.split("+") else "bf16"
    if mfu in (None, ""):
        share, source = DEFAULT_MFU, "assumed (give --mfu or --mfu measured)"
    elif mfu == "measured":
        share, source = llm_plan.measured_mfu(store.results() if store is not None else [], precision)
    else:
        try:
            share, source = float(mfu), "given"
        except ValueError:
            raise UserError(f"--mfu {mfu!r}: a share of peak such as 0.4, or 'measured'") from None
        finite(share, "--mfu", cap=1.0)
    plans = [llm_plan.plan(model or "gpt3-175b", tokens if tokens is not None else 300e9, gpu, n, share,
                           precision, mfu_from=source) for n in counts]
    if fmt == "json":
        return llm_claims.render_plan({"plans": plans}, "json")
    return "\n".join(llm_claims.render_plan(p, fmt) for p in plans)
