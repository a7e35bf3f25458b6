"""What advise adds for llm-train: the memory a measured run needed, and measured scaling.

A card with less memory per GPU than the fastest measured single-GPU run needed cannot run
that configuration at all, however fast its peak; with --gpus N the scaling efficiency is the
one llm-train measured at N ranks (FSDP2, TP ...), not the DDP interconnect model.
"""

from __future__ import annotations

from gpuarena.analysis import rows as R
from gpuarena.analysis.derived import with_derived


def adjust(rows: list[dict], excluded: list[dict], results: list[dict], gpus: int) -> tuple[list[dict], list[dict]]:
    """advise's rows for llm-train, less the cards too small, scaled by the measured efficiency."""
    results = with_derived(results)   # scaling efficiency is computed when read, never stored
    single = [r for r in R.finite_first(results) if (r.get("gpus") or 1) == 1 and r.get("peak_memory_bytes")]
    ref = max(single, key=lambda r: r["throughput_median"]) if single else None
    need = ref["peak_memory_bytes"] if ref else None
    effs = [r["extra"]["scaling_efficiency"] for r in R.finite_first(results)
            if (r.get("gpus") or 1) == gpus and isinstance((r.get("extra") or {}).get("scaling_efficiency"), float)]
    eff = max(effs) if effs and gpus > 1 else None
    kept = []
    for row in rows:
        if need and row["memory_gb"] * 1e9 < need:
            shape = (ref.get("extra") or {}).get("shape") or ref["params"].get("shape")
            excluded.append({"gpu": row["gpu"], "reason": f"llm-train {shape} {ref['variant']} needed "
                             f"{need / 1e9:.1f} GB per GPU on {R.gpu_of(ref)} (measured peak)"})
            continue
        if eff is not None:
            row = {**row, "throughput": row["throughput"] / max(row["scaling"], 1e-12) * eff, "scaling": eff,
                   "note": "; ".join(x for x in (row["note"], f"scaling {eff:.2f} as measured at {gpus} GPUs") if x)}
        kept.append(row)
    kept.sort(key=lambda x: -x["throughput"])
    for i, x in enumerate(kept, 1):
        x["rank"] = i
    return kept, excluded
