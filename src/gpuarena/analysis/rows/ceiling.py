"""Share of the measured ceiling: a result's TFLOP/s over the best ``matmul`` TFLOP/s.

The ceiling is the best ``ok`` matmul result with the same precision on the same
device name among the stored results (the micro-benchmarks of workloads/micro/).
A measured ceiling, not the datasheet's peak: what the card's libraries really
reach, so a share near 1.0 means the workload is as fast as dense GEMM allows.
Computed when results are read (analysis/rows/derived.py), never frozen into a record: a
share then follows the best matmul stored, whenever it was measured.
"""

from __future__ import annotations

from gpuarena.analysis.rows import precision as P
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry
from gpuarena.store.result import Result

# A result's precision -> the matmul dtype whose ceiling bounds it, where the GPU or the recipe is
# not in the catalog.  Otherwise the precision the recipe executed at (the rule `check` and the share
# of peak use): PyTorch's default runs ResNet-50's convolutions in TF32 (cuDNN's default), so its
# ceiling is the TF32 matmul, not the FP32 one it used to be set against (120% of it on the H200).
CEILING_DTYPE = {"default": "fp32", "fp32": "fp32", "tf32": "tf32", "bf16": "bf16",
                 "fp16": "fp16", "fp8": "fp8"}


def ceiling_dtype(r) -> str | None:
    """The matmul precision whose ceiling bounds ``r``: the executed one (precision.peak_precision)."""
    g = None if _peak_probe(r) else catalog.find(r.device_name or "")
    if g is not None:
        try:
            return P.peak_precision(r.workload, P.request_of_variants(frozenset(r.variant.split("+")),
                                                                       r.precision), P.arch_of(g))
        except (UserError, KeyError, ValueError):
            pass
    return CEILING_DTYPE.get(r.precision or "")


def _peak_probe(r: Result) -> bool:
    """A result of the workload that measures the compute ceiling (matmul)."""
    return registry.has(r.workload, device_figure="compute-peak")


def best_matmuls(pool: list[Result]) -> dict[tuple, Result]:
    """(device name, dtype, tiny) -> the fastest ok, measured matmul result: one pass over pool."""
    best: dict[tuple, Result] = {}
    for r in pool:
        if (not _peak_probe(r) or r.status != "ok" or not r.tflops
                or r.source == "published"):
            continue
        key = (r.device_name, r.precision, r.size == "tiny")
        if key not in best or r.tflops > best[key].tflops:
            best[key] = r
    return best


def best_matmul(pool: list[Result], device_name: str, dtype: str, tiny: bool) -> Result | None:
    """The fastest ok, measured matmul result of that dtype on that device, or None.

    Tiny results (CPU tests) compare only with tiny matmuls, full ones with full ones.
    """
    return best_matmuls(pool).get((device_name, dtype, tiny))


def figures(pool: list[Result], result: Result, index: dict[tuple, Result] | None = None) -> dict:
    """{share_of_ceiling, ceiling} for one result against the matmuls in ``pool`` (``index``:
    best_matmuls(pool), when the caller asks for many results); {} when the result has no
    FLOP rate, no ceiling dtype, or no matmul of that dtype was stored."""
    tflops, dtype = result.tflops, ceiling_dtype(result)
    if result.status != "ok" or not tflops or dtype is None:
        return {}
    index = best_matmuls(pool) if index is None else index
    best = index.get((result.device_name, dtype, result.size == "tiny"))
    own = _peak_probe(result)
    if best is None and not own:
        return {}
    if own and (best is None or best.id == result.id or tflops >= best.tflops):
        ceiling = {"tflops": tflops, "precision": dtype, "result_id": None, "note": "this result"}
    else:
        ceiling = {"tflops": best.tflops, "precision": dtype, "result_id": best.id,
                   "run_id": best.run_id, "shape": [best.params.get(k) for k in ("m", "n", "k")]}
    if result.precision == "default":
        ceiling["note"] = f"PyTorch default precision, executed at {dtype}: compared with the {dtype} matmul ceiling"
    return {"share_of_ceiling": tflops / ceiling["tflops"], "ceiling": ceiling}
