"""FP8 for llm-train and llm-serve, in one place: torchao's recipe for training, PyTorch's own FP8 GEMM for serving.

torchtitan's way: FP8 is a converter applied to a built model, not a second model.

- ``require``: training's FP8 needs a CUDA GPU of compute capability 8.9+ (precision.FP8_MIN_CAPABILITY) and
  torchao; otherwise the case is stored as skipped with the reason, never run at another precision.
- training (llm-train ``fp8``): ``convert_training`` swaps the eligible linears for torchao's
  ``Float8Linear`` (dynamic tensorwise scaling); ``tp_styles`` are its tensor-parallel plans;
  ``precompute_fsdp_scales`` does the one all-reduce of the weight scales FSDP2's FP8 all-gather needs.
- serving (llm-serve ``fp8-weights``): ``require_serving`` here; the weights are
  ``weight_only.Fp8Linear`` (PyTorch's own ``torch._scaled_mm``, no torchao: weight-only in a
  batch-1 decode step, FP8 tensor cores with dynamic row-wise activation scales elsewhere).
"""

from __future__ import annotations

from gpuarena.errors import WorkloadSkipped
from gpuarena.workloads.llm.layout import COLWISE, ROWWISE
from gpuarena.workloads.precision import FP8_MIN_CAPABILITY


def require(device, what: str = "fp8") -> None:
    """Skip (with the reason) where torchao's FP8 cannot run on ``device``."""
    import torch

    need = f"{what} needs a CUDA GPU of compute capability {FP8_MIN_CAPABILITY[0]}.{FP8_MIN_CAPABILITY[1]}+"
    if device.type != "cuda":
        raise WorkloadSkipped(f"{need} (Ada, Hopper or newer); this case runs on {device.type}")
    cap = torch.cuda.get_device_capability(device)
    if tuple(cap) < FP8_MIN_CAPABILITY:
        raise WorkloadSkipped(f"{need} (Ada, Hopper or newer); this GPU is {cap[0]}.{cap[1]}")
    try:
        import torchao.float8  # noqa: F401
    except ImportError as e:
        raise WorkloadSkipped(f"{what} needs torchao (pip install torchao): {e}") from None


# --- training -------------------------------------------------------------------------

def eligible(tp: int):
    """torchao's filter: every linear but the output head, whose sharded dims divide by 16
    (FP8 GEMMs on the tensor cores need multiples of 16)."""
    from torch import nn

    def keep(mod, fqn: str) -> bool:
        if fqn == "output" or not isinstance(mod, nn.Linear):
            return False
        out_f = mod.out_features // tp if fqn.endswith(COLWISE) else mod.out_features
        in_f = mod.in_features // tp if fqn.endswith(ROWWISE) else mod.in_features
        return out_f % 16 == 0 and in_f % 16 == 0
    return keep


def convert_training(model, tp: int, fsdp: bool) -> int:
    """Swap eligible linears for torchao Float8Linear (tensorwise dynamic scaling); returns how many."""
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training

    keep = eligible(tp)
    n = sum(1 for fqn, m in model.named_modules() if keep(m, fqn))
    # FSDP2 all-gathers FP8 weights instead of bf16 ones when this is on (torchtitan's default).
    convert_to_float8_training(model, module_filter_fn=keep,
                               config=Float8LinearConfig(enable_fsdp_float8_all_gather=fsdp))
    return n


def tp_styles():
    """(column-wise, row-wise) tensor-parallel styles that keep the FP8 linears' casts sharded."""
    from torchao.float8.float8_tensor_parallel import Float8ColwiseParallel, Float8RowwiseParallel

    return Float8ColwiseParallel, Float8RowwiseParallel


def precompute_fsdp_scales(model) -> None:
    """One all-reduce of the FP8 weight scales for FSDP2's next FP8 all-gather (after each step)."""
    from torchao.float8 import precompute_float8_dynamic_scale_for_fsdp

    precompute_float8_dynamic_scale_for_fsdp(model)


# --- serving --------------------------------------------------------------------------

def scaled_mm_works(device, rowwise: bool) -> str | None:
    """None where this PyTorch's FP8 GEMM (``torch._scaled_mm``) runs on ``device`` with one scale a
    row (``rowwise``) or one a tensor; else the first line of its error.  Row-wise scales need
    Hopper (sm_90), Ada from torch 2.7, and not every Blackwell build has them."""
    import torch

    a = torch.zeros(16, 16, device=device).to(torch.float8_e4m3fn)
    ones = (torch.ones(16, 1, device=device), torch.ones(1, 16, device=device)) if rowwise else \
        (torch.ones((), device=device), torch.ones((), device=device))
    try:
        torch._scaled_mm(a, a.t(), scale_a=ones[0], scale_b=ones[1], out_dtype=torch.float32)
    except (RuntimeError, NotImplementedError, AttributeError, TypeError) as e:
        return str(e).splitlines()[0][:160] if str(e) else type(e).__name__
    return None


def require_serving(device) -> None:
    """Skip (with the reason) where the serving recipe cannot run: a CUDA GPU below sm_89, or a
    PyTorch whose FP8 matmul (``torch._scaled_mm``) does not run on this device at all."""
    import torch

    if device.type == "cuda" and tuple(torch.cuda.get_device_capability(device)) < FP8_MIN_CAPABILITY:
        cap = torch.cuda.get_device_capability(device)
        raise WorkloadSkipped(f"fp8-weights needs a CUDA GPU of compute capability {FP8_MIN_CAPABILITY[0]}."
                              f"{FP8_MIN_CAPABILITY[1]}+ (Ada, Hopper or newer); this GPU is {cap[0]}.{cap[1]}")
    why = scaled_mm_works(device, rowwise=False)
    if why:
        raise WorkloadSkipped(f"fp8-weights: this PyTorch has no FP8 matmul on {device.type}: {why}")
