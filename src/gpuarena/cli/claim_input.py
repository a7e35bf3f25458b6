"""The claims `check` judges (a CSV's rows or the options' one claim), and each claim's numbers,
precision and workload refused up front as one line before any verdict (never a traceback, never an
Infinity in the output)."""

from __future__ import annotations

from gpuarena.errors import UserError
from gpuarena.safeio import finite
from gpuarena.store.result import MAX_THROUGHPUT
from gpuarena.workloads import registry


def check_claim_input(c: dict) -> None:
    """A claim's numbers, precision and workload, refused up front as one line (never a
    traceback, never an Infinity in the output)."""
    from gpuarena.analysis.physics import models
    from gpuarena.analysis.rows.precision import request_of

    if registry.fact(c.get("workload"), "device_figure"):
        return     # a micro-benchmark's figure: analysis/physics/micro_check.py refuses what it cannot judge
    if models.SERVING.judges(c.get("workload")) and c.get("batch_size") in (None, ""):
        c = {**c, "batch_size": 1}     # an engine-chosen batch: check_serving bounds it at the largest that fits
    try:
        bs = int(str(c.get("batch_size")).strip())
        nums = {k: float(str(c[k]).strip()) for k in ("throughput", "latency", "scaling", "gpus", "replicas", "ttft")
                if c.get(k) not in (None, "")}
    except ValueError:
        raise UserError(f"claim {c.get('gpu')!s:.40} {c.get('workload')!s:.40}: batch_size must be an "
                        "integer and throughput, latency, scaling, gpus, replicas and ttft numbers") from None
    for k, v in nums.items():
        finite(v, k, cap=MAX_THROUGHPUT)
    if not 1 <= bs <= 1_000_000:
        raise UserError(f"batch_size {bs}: must be between 1 and 1000000")
    if models.SERVING.judges(c.get("workload")):     # the weights' precision: bf16 ... int4
        from gpuarena.analysis.physics.serving_claims import serving_precision as request_of
    request_of(c.get("precision") or "")
    wl = registry.get(str(c.get("workload")))
    # LLM training claims: tokens/s over all GPUs
    if wl.launcher == "torchrun" and not models.DECODER_TRAINING.judges(wl.name):
        raise UserError(f"{wl.name} is a multi-GPU workload; check the claim of the model it trains "
                        "(e.g. resnet50-train) per GPU")


def claims_of(one: dict, csv_path: str | None) -> list[dict]:
    """The claims `check` judges: the --csv file's rows, or the single claim of the options (an llm-serve
    claim may leave the batch to the engine and state a throughput, a latency or a TTFT)."""
    if csv_path:
        from gpuarena.analysis.verbs.check import read_claims

        if any(x is not None for x in one.values()):
            raise UserError("give either --csv or a single claim (--gpu ... --throughput), not both")
        return read_claims(csv_path)
    from gpuarena.analysis.physics import models

    if models.SERVING.judges(one["workload"]):
        if any(one[k] is None for k in ("gpu", "precision")) or all(
                one[k] is None for k in ("throughput", "latency", "ttft")):
            raise UserError("an llm-serve claim needs --gpu, --precision and --throughput, --latency or --ttft "
                            "(or --csv)")
    elif not registry.fact(one["workload"], "device_figure") and (   # micro_check says what a micro claim needs
            any(one[k] is None for k in ("gpu", "workload", "precision", "batch_size"))
            or all(one[k] is None for k in ("throughput", "latency", "scaling"))):
        raise UserError("a claim needs --gpu, --workload, --precision, --batch-size and --throughput, "
                        "--latency or --scaling (or --csv)")
    return [one]
