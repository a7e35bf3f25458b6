"""What the arithmetic actually ran as, per op class, not only what was asked.

PyTorch's defaults are not one precision: with FP32 tensors cuDNN runs
convolutions in TF32 on Ampere and newer (torch.backends.cudnn.allow_tf32 is
True by default) while matmuls stay IEEE FP32 (torch.backends.cuda.matmul.
allow_tf32 is False since PyTorch 1.12).  A GPU without TF32 (Volta, Turing)
runs FP32 on CUDA cores whatever was asked.  The precision whose peak bounds
a workload is the one its dominant op class ran at.

The workload facts (dominant op class, executed precision per op class) belong
to the workload classes (workloads.base, workloads.precision); this module only
names the precisions a claim may state; which generations have TF32 is the catalog's tf32 column.
"""

from __future__ import annotations

from gpuarena.data import catalog
from gpuarena.errors import UserError

PEAK_ORDER = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8")   # the catalog's peaks, slowest first
NAMES = {"default": "FP32 (PyTorch defaults)", "fp32-ieee": "FP32 (IEEE)", "fp32": "FP32", "tf32": "TF32",
         "bf16": "BF16", "fp16": "FP16", "fp8": "FP8", "int8": "INT8", "int4": "INT4"}

# What a claim or a result may state -> the request it stands for.
#  "default" / "fp32": FP32 tensors under PyTorch's defaults (what the articles' code runs);
#  "fp32-ieee": TF32 switched off everywhere (gpuarena's `fp32` variant).
REQUESTS = {"default": "default", "fp32": "default", "float32": "default", "seed": "default",
            "fp32-ieee": "fp32-ieee", "ieee-fp32": "fp32-ieee", "fp32-strict": "fp32-ieee",
            "tf32": "tf32", "bf16": "bf16", "bfloat16": "bf16", "amp-bf16": "bf16",
            "fp16": "fp16", "float16": "fp16", "half": "fp16", "amp-fp16": "fp16", "amp": "fp16",
            "mixed": "fp16", "fp8": "fp8", "fp8-mixed": "fp8", "int8": "int8"}


def arch_of(gpu: catalog.GPU) -> str:
    """The card's architecture family ("ampere", "ada", "hopper" ...): what a workload's executed precision
    is asked for; its capabilities are the catalog's columns (data/catalog.py)."""
    return gpu.family


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


# The precision variants that stand for each request when a workload class is asked what it executes.
REQUEST_VARIANTS = {"default": frozenset({"seed"}), "fp32-ieee": frozenset({"fp32"}), "tf32": frozenset({"tf32"}),
                    "bf16": frozenset({"amp-bf16"}), "fp16": frozenset({"amp-fp16"})}


def _workload_class(workload: str):
    from gpuarena.workloads import registry

    return registry.get(workload)


def dominant_op(workload: str) -> str:
    """The op class that carries most of a workload's FLOPs (the workload class says)."""
    return _workload_class(workload).dominant_op


def executed(workload: str, request: str, arch: str) -> dict[str, str]:
    """{op class: precision it ran at} for a request on a GPU generation (the workload class says;
    FP8 and INT8, which no workload variant runs, are taken as stated)."""
    if request not in REQUEST_VARIANTS:
        return {"matmul": request, "conv": request, "attention": request, "elementwise": "fp32"}
    return _workload_class(workload).executed_precision(REQUEST_VARIANTS[request], arch)


def peak_precision(workload: str, request: str, arch: str, params: dict | None = None) -> str:
    """The precision whose peak bounds the workload for a request: the class's own answer
    (Workload.peak_precision: a wrapper such as ddp-train answers for the recipe it wraps);
    FP8 and INT8, which no workload variant runs, are taken as stated."""
    if request not in REQUEST_VARIANTS:
        return request
    return _workload_class(workload).peak_precision(REQUEST_VARIANTS[request], arch, params)


def describe(workload: str, request: str, arch: str) -> str:
    ex = executed(workload, request, arch)
    dom = dominant_op(workload)
    if ex.get("conv") == ex.get("matmul") == ex.get("elementwise"):
        return f"{NAMES.get(ex[dom], ex[dom])} throughout"
    if request in ("default", "tf32") and not catalog.has_tf32(arch):
        return f"FP32 on CUDA cores ({arch.capitalize()} has no TF32)"
    if request == "default" and dom == "matmul":
        return "FP32 tensors: IEEE FP32 matmuls (PyTorch's default since 1.12)"
    if request == "default":
        return f"FP32 tensors: {NAMES[ex['conv']]} convolutions (cuDNN default), {NAMES[ex['matmul']]} matmuls"
    if request == "fp32-ieee":
        return "IEEE FP32 throughout (TF32 off)"
    return f"{NAMES.get(ex[dom], ex[dom])} {'convolutions' if dom == 'conv' else 'matmuls'}"


def would_need(implied: float, g: catalog.GPU, prec: str) -> str:
    """Which faster precision a TFLOP/s figure above ``prec``'s peak on ``g`` would need (check and
    micro_check say it beside an impossible claim)."""
    order = PEAK_ORDER
    above = [p for p in order if g.peaks.get(p) and order.index(p) > order.index(prec) and implied <= g.peaks[p]]
    if not above:
        return "above the card's peak at every precision it has"
    p = above[0]
    same = [q for q in above if g.peaks[q] == g.peaks[p]]     # BF16 and FP16 share their tensor-core rate
    unit = "tensor cores" if p != "fp32" else "CUDA cores"
    return f"would need {' or '.join(NAMES[q] for q in same)} {unit} ({g.peaks[p]:g} TFLOP/s)"
