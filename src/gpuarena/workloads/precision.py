"""The precision a recipe's arithmetic runs at, per op class.

Two names for two questions:

- ``precision_of`` is what a result stores in its ``precision`` column ("default" for
  PyTorch's defaults, which are neither FP32 nor TF32 throughout); stored values never change.
- ``executed_precision`` is what the math actually runs at, per op class, on a given
  architecture family: the precision whose peak a share-of-peak figure divides by.

PyTorch's defaults (since 1.12): ``torch.backends.cuda.matmul.allow_tf32 = False`` (IEEE
FP32 matmuls), ``torch.backends.cudnn.allow_tf32 = True`` (TF32 convolutions, on GPUs
that have TF32: Ampere and newer).  Volta and Turing have no TF32, so there both run FP32.
Autocast runs matmuls and convolutions in the low precision and keeps elementwise ops and
reductions in FP32; casting the weights (bf16, fp16) runs everything in that precision.
"""

from __future__ import annotations

from gpuarena.data.catalog import has_tf32

OP_CLASSES = ("matmul", "conv", "attention", "elementwise")
# FP8 tensor cores arrived with Ada (sm_89) and Hopper (sm_90): torch._scaled_mm and torchao's FP8
# recipes need them.  The one definition, for the device a workload runs on (micro/run.py, quant.py, llm/fp8.py);
# a catalog card says it in its fp8 column (data/catalog.py), which tests/data/test_capabilities.py holds to this.
FP8_MIN_CAPABILITY = (8, 9)
PRECISION_VARIANTS = ("fp32", "tf32", "amp-bf16", "amp-fp16", "bf16", "fp16")


def precision_of(variants: frozenset[str], device=None) -> str:
    """Name of the arithmetic precision a recipe runs at, as stored with a result.

    ``seed`` is PyTorch's default: FP32 matmuls (TF32 off), but cuDNN convolutions
    in TF32 on Ampere and newer -- reported as "default" so it is not confused with either.
    """
    for v in ("amp-bf16", "bf16"):
        if v in variants:
            return "bf16"
    for v in ("amp-fp16", "fp16"):
        if v in variants:
            return "fp16"
    if "tf32" in variants:
        return "tf32"
    if "fp32" in variants:
        return "fp32"
    return "default"


def executed(variants: frozenset[str], arch: str | None) -> dict[str, str]:
    """Precision per op class for a recipe of the shared precision variants.

    ``arch``: the catalog's architecture family in lower case, "cpu" for a CPU result,
    None when unknown (taken as a CUDA GPU of Ampere or newer).  Which families have TF32 is the
    catalog's tf32 column (data/catalog.py has_tf32); a family no catalog card has runs FP32.
    """
    tf32 = "tf32" if has_tf32(arch) else "fp32"
    for pure in ("bf16", "fp16"):
        if pure in variants:
            return dict.fromkeys(OP_CLASSES, pure)
    for amp, low in (("amp-bf16", "bf16"), ("amp-fp16", "fp16")):
        if amp in variants:
            return {"matmul": low, "conv": low, "attention": low, "elementwise": "fp32"}
    if "fp32" in variants:
        return dict.fromkeys(OP_CLASSES, "fp32")
    if "tf32" in variants:
        return {"matmul": tf32, "conv": tf32, "attention": tf32, "elementwise": "fp32"}
    return {"matmul": "fp32", "conv": tf32, "attention": "fp32", "elementwise": "fp32"}
