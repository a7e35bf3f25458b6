"""What the arithmetic actually ran as, per op class, not only what was asked.

PyTorch's defaults are not one precision: with FP32 tensors cuDNN runs
convolutions in TF32 on Ampere and newer (torch.backends.cudnn.allow_tf32 is
True by default) while matmuls stay IEEE FP32 (torch.backends.cuda.matmul.
allow_tf32 is False since PyTorch 1.12).  A GPU without TF32 (Volta, Turing)
runs FP32 on CUDA cores whatever was asked.  The precision whose peak bounds
a workload is the one its dominant op class ran at.

The workload facts (dominant op class, executed precision per op class) belong
to the workload classes (workloads.base); `_workload_class` reads them there
and this module only adds the naming of claim precisions and GPU generations.
"""

from __future__ import annotations

from gpuarena.data import catalog
from gpuarena.errors import UserError

TENSOR_TF32_ARCHS = ("ampere", "ada", "hopper", "blackwell")
ARCHS = ("volta", "turing", *TENSOR_TF32_ARCHS)
NAMES = {"default": "FP32 (PyTorch defaults)", "fp32-ieee": "FP32 (IEEE)", "fp32": "FP32", "tf32": "TF32", "bf16": "BF16", "fp16": "FP16", "fp8": "FP8", "int8": "INT8"}

# What a claim or a result may state -> the request it stands for.
#  "default" / "fp32": FP32 tensors under PyTorch's defaults (what the articles' code runs);
#  "fp32-ieee": TF32 switched off everywhere (gpuarena's `fp32` variant).
REQUESTS = {"default": "default", "fp32": "default", "float32": "default", "seed": "default",
            "fp32-ieee": "fp32-ieee", "ieee-fp32": "fp32-ieee", "fp32-strict": "fp32-ieee",
            "tf32": "tf32", "bf16": "bf16", "bfloat16": "bf16", "amp-bf16": "bf16",
            "fp16": "fp16", "float16": "fp16", "half": "fp16", "amp-fp16": "fp16", "amp": "fp16",
            "mixed": "fp16", "fp8": "fp8", "fp8-mixed": "fp8", "int8": "int8"}


def arch_of(gpu: catalog.GPU) -> str:
    a = gpu.architecture.lower()
    for name in ARCHS:
        if name in a:
            return name
    raise UserError(f"{gpu.name}: architecture {gpu.architecture!r} unknown to gpuarena")


def request_of(text: str) -> str:
    key = str(text).strip().lower()
    if key not in REQUESTS:
        raise UserError(f"precision {text!r}: choose one of default, fp32, fp32-ieee, tf32, bf16, fp16, fp8, "
                        "amp-fp16, amp-bf16")
    return REQUESTS[key]


def request_of_variants(variants: frozenset[str], stored: str | None) -> str:
    """The request a measured result made: gpuarena's `fp32` variant switches TF32 off."""
    if "fp32" in variants:
        return "fp32-ieee"
    return request_of(stored or "default")


def _workload_class(workload: str):
    from gpuarena.workloads import registry

    return registry.get(workload)


def dominant_op(workload: str) -> str:
    """The op class that carries most of a workload's FLOPs ("conv" or "matmul")."""
    cls = _workload_class(workload)
    op = getattr(cls, "dominant_op", None)
    if isinstance(op, str):
        return op
    # Until every workload class states it: the conv nets are the ResNets and the SD UNet.
    return "conv" if workload.startswith(("resnet", "sd15")) else "matmul"


def executed(workload: str, request: str, arch: str) -> dict[str, str]:
    """{op class: precision it ran at} for a request on a GPU generation."""
    has_tf32 = arch in TENSOR_TF32_ARCHS
    fp32_tc = "tf32" if has_tf32 else "fp32"
    if request == "default":
        return {"conv": fp32_tc, "matmul": "fp32", "other": "fp32"}
    if request == "fp32-ieee":
        return {"conv": "fp32", "matmul": "fp32", "other": "fp32"}
    if request == "tf32":
        return {"conv": fp32_tc, "matmul": fp32_tc, "other": "fp32"}
    return {"conv": request, "matmul": request, "other": "fp32"}


def peak_precision(workload: str, request: str, arch: str) -> str:
    """The precision whose peak bounds the workload: the one its dominant op class ran at."""
    if workload.startswith("sd15"):
        return "fp16"    # the pipeline is loaded in fp16 whatever the variant (sd15.Sd15.precision)
    return executed(workload, request, arch)[dominant_op(workload)]


def describe(workload: str, request: str, arch: str) -> str:
    ex = executed(workload, request, arch)
    dom = dominant_op(workload)
    if request in ("default", "tf32") and arch not in TENSOR_TF32_ARCHS:
        return f"FP32 on CUDA cores ({arch.capitalize()} has no TF32)"
    if request == "default" and dom == "matmul":
        return "FP32 tensors: IEEE FP32 matmuls (PyTorch's default since 1.12)"
    if request == "default":
        return f"FP32 tensors: {NAMES[ex['conv']]} convolutions (cuDNN default), {NAMES[ex['matmul']]} matmuls"
    if request == "fp32-ieee":
        return "IEEE FP32 throughout (TF32 off)"
    return f"{NAMES.get(ex[dom], ex[dom])} {'convolutions' if dom == 'conv' else 'matmuls'}"
