"""Weight-only quantisation of a built ``Llama`` (model.py) for llm-serve: fewer bytes a weight for
the decode to read, activations and arithmetic in the model's own dtype.

- ``Int8WeightOnlyLinear``: gpt-fast's ``WeightOnlyInt8Linear`` (pytorch-labs/gpt-fast,
  quantize.py): int8 weights, one symmetric scale per output channel, dequantised inside the matmul.
  Its input is realised first (``realised``): under torch.compile inductor otherwise fuses the
  producer of the input (the SwiGLU product before the down projection, an RMSNorm before the
  others) into the matrix-vector reduction, and every output row recomputes it.  H200, llama3-8b's
  down projection for one token (benchmarks/int8_gemv.py, session 9): 60.7 us fused, 35.4 us with
  the activation realised first; llm-serve int8 at version 3 (fused) decoded at 0.91x bf16.
- ``Int4WeightOnlyLinear``: gpt-fast's ``WeightOnlyInt4Linear`` on PyTorch's tinygemm kernel
  (``aten._weight_int4pack_mm``, CUDA sm80+; ``_weight_int4pack_mm_for_cpu`` on a CPU): 4-bit
  weights in groups along the input dimension (128 where it divides), each group with its own
  scale and zero point (asymmetric, min-max), half a byte a weight plus 4 bytes a group.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from gpuarena.errors import UserError
from gpuarena.workloads.llm import fp8
from gpuarena.workloads.llm.precisions import int4_layout  # the layout rule, shared with analysis's bytes

INT8 = "int8 weight-only, per-channel symmetric scales (gpt-fast WeightOnlyInt8Linear); input realised"
FP8 = ("FP8 e4m3 weights, one scale per output channel; one row under compile (a batch-1 decode step): "
       "weight-only, upcast inside the matrix-vector product; more rows: FP8 tensor cores "
       "(torch._scaled_mm), activations scaled per row when they arrive")
E4M3_MAX = 448.0
# the rungs whose weights are upcast inside every product, the prefill's too: inductor's compiled
# dynamic-length prefill over them ran at 0.93 TFLOP/s (int8, H200, session 8).  FP8's prefill runs
# on the FP8 tensor cores: compiled, 992 TFLOP/s at batch 64 (session 11)
UPCAST_EVERY_ROW = frozenset({"int8-weights", "int4-weights"})
INT4 = ("int4 weight-only, groups of {g} along the input with a scale and zero point each, asymmetric "
        "(gpt-fast WeightOnlyInt4Linear, PyTorch's tinygemm kernel)")


def one_row(x: torch.Tensor, features: int) -> bool:
    """Whether ``x`` is the one row of a compiled step (a batch-1 decode): the one test of every layer
    that takes that case apart (Fp8Linear's weight-only product, engine.FusedFeedForward's realised
    SwiGLU, gemv's OneRowLinear and FoldedNorm), so they agree."""
    return x.numel() == features and torch.compiler.is_compiling()


def realised(x: torch.Tensor) -> torch.Tensor:
    """``x`` written to memory by a kernel of its own: inductor lowers a foreach op as its own
    kernel, so the matrix-vector reduction that follows reads the activation once instead of
    recomputing its producer for every output row.  The value is ``x`` exactly.  A CPU tensor is
    returned as it is: inductor decomposes the product into a reduction only on a GPU (and its CPU
    FlexAttention template, torch 2.14, refuses the foreach as an epilogue)."""
    return torch._foreach_add([x], 0)[0] if x.is_cuda else x


class Int8WeightOnlyLinear(nn.Module):
    """int8 weights, one scale per output channel (symmetric), activations in their own dtype."""

    def __init__(self, lin: nn.Linear):
        super().__init__()
        w = lin.weight.detach()
        scales = w.abs().amax(dim=1).float().clamp(min=1e-12) / 127.0
        q = torch.round(w.float() / scales[:, None]).clamp(-127, 127).to(torch.int8)
        self.register_buffer("weight", q)
        self.register_buffer("scales", scales.to(w.dtype))
        self.in_features, self.out_features = lin.in_features, lin.out_features

    def forward(self, x):
        return F.linear(realised(x), self.weight.to(x.dtype)) * self.scales


def per_row_fp8(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``t`` (2-d) as e4m3 with one float32 scale a row: (values, scales [rows, 1])."""
    scales = t.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12) / E4M3_MAX
    return (t.float() / scales).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn), scales


class Fp8Linear(nn.Module):
    """FP8 (e4m3) weights with one scale per output channel, read two ways:
    - one row under torch.compile (a batch-1 decode step): the weight is upcast to the activation's
      dtype inside inductor's matrix-vector reduction, as int8's is (weight-only: 1 byte a weight
      read, bf16 arithmetic).  cuBLAS's FP8 GEMM on one row, behind the activation's own scaling
      kernels, decoded at 0.88x bf16 on the H200 (torchao's recipe, session 9);
    - more rows (the prefill, a batched decode): the FP8 tensor cores, ``torch._scaled_mm`` with the
      activation scaled per row when it arrives (torchao's dynamic-activation FP8-weight recipe,
      row-wise scales).  ``rowwise=False`` where this PyTorch's GEMM takes one scale a tensor only
      (fp8.scaled_mm_works): unit scales in the GEMM, the row and channel scales on its FP32 output."""

    def __init__(self, lin: nn.Linear, rowwise: bool = True):
        super().__init__()
        q, scales = per_row_fp8(lin.weight.detach())
        self.register_buffer("weight", q)
        self.register_buffer("scales", scales.t().contiguous())          # [1, out], float32
        self.register_buffer("unit", torch.ones((), device=q.device))
        self.in_features, self.out_features, self.rowwise = lin.in_features, lin.out_features, rowwise

    def forward(self, x):
        if one_row(x, self.in_features):
            return F.linear(realised(x), self.weight.to(x.dtype)) * self.scales.to(x.dtype)
        xq, xs = per_row_fp8(x.reshape(-1, self.in_features))
        if self.rowwise:
            y = torch._scaled_mm(xq, self.weight.t(), scale_a=xs, scale_b=self.scales, out_dtype=x.dtype)
        else:
            y = torch._scaled_mm(xq, self.weight.t(), scale_a=self.unit, scale_b=self.unit, out_dtype=torch.float32)
            y = (y * xs * self.scales).to(x.dtype)
        return y.reshape(*x.shape[:-1], self.out_features)


class Int4WeightOnlyLinear(nn.Module):
    """4-bit weights in groups along the input, a bf16 (fp32 on a CPU) scale and zero per group;
    w = (q - 8) * scale + zero, the form tinygemm dequantises in its inner loop."""

    def __init__(self, lin: nn.Linear, group: int, tiles: int):
        super().__init__()
        w = lin.weight.detach().float()
        n, k = w.shape
        groups = w.reshape(-1, group)
        lo, hi = groups.amin(dim=1, keepdim=True), groups.amax(dim=1, keepdim=True)
        scales = (hi - lo).clamp(min=1e-6) / 15
        zeros = lo + scales * 8
        q = ((groups - lo) / scales).round().clamp(0, 15).to(torch.int32).reshape(n, k)
        dt = lin.weight.dtype
        self.register_buffer("scales_and_zeros", torch.cat(
            [scales.reshape(n, -1, 1), zeros.reshape(n, -1, 1)], 2).transpose(0, 1).contiguous().to(dt))
        if w.is_cuda:     # the CUDA packer takes two 4-bit values a byte (torch >= 2.5)
            packed = torch.ops.aten._convert_weight_to_int4pack((q[:, ::2] << 4 | q[:, 1::2]).to(torch.uint8), tiles)
        else:
            packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, tiles)
        self.register_buffer("weight", packed)
        self.group, self.in_features, self.out_features = group, k, n

    def _mm(self, x2d):
        op = (torch.ops.aten._weight_int4pack_mm if x2d.is_cuda else torch.ops.aten._weight_int4pack_mm_for_cpu)
        return op(x2d, self.weight, self.group, self.scales_and_zeros)

    def forward(self, x):
        lead = x.shape[:-1]
        return self._mm(x.reshape(-1, self.in_features)).reshape(*lead, self.out_features)


def replace_linears(model: nn.Module, make, why: str = "") -> str:
    """Every ``nn.Linear`` (the output head too, as gpt-fast does) replaced by ``make(linear)``
    where that returns a module; what the stored description adds for those left (``why`` they
    were), or "" when none was."""
    left = 0
    for _name, mod in list(model.named_modules()):
        for child_name, child in list(mod.named_children()):
            if type(child) is nn.Linear:
                new = make(child)
                if new is None:
                    left += 1
                else:
                    setattr(mod, child_name, new)
    return f"; {left} linear layer(s) left in their dtype ({why})" if left else ""


def require(device: torch.device, variants) -> None:
    """``int4-weights``: tinygemm's CUDA kernel needs sm80+; ``fp8-weights``: sm89+ and an FP8
    matmul in this PyTorch (skipped otherwise, fp8.require_serving).  Before 16 GB of weights are built."""
    if "fp8-weights" in variants:
        fp8.require_serving(device)
    if "int4-weights" in variants and device.type == "cuda" and torch.cuda.get_device_capability(device) < (8, 0):
        raise UserError("int4-weights: PyTorch's int4 kernel (tinygemm) needs an sm_80+ GPU (A100 or newer)")


@torch.no_grad()
def quantize(model: nn.Module, kind: str) -> str:
    """Quantise every linear layer of ``model`` in place; ``kind`` is ``int8``, ``int4`` or ``fp8``
    (the layers whose dimensions divide by 16, the FP8 GEMM's rule).  Returns the description
    stored with the result."""
    if kind == "fp8":
        return _fp8(model)
    if kind == "int8":
        replace_linears(model, Int8WeightOnlyLinear)
        return INT8
    groups: set[int] = set()

    def int4(lin: nn.Linear):
        layout = int4_layout(lin.in_features, lin.out_features)
        if layout:
            groups.add(layout[0])
            return Int4WeightOnlyLinear(lin, *layout)
        return None

    left = replace_linears(model, int4, "shape not a tinygemm layout")
    return INT4.format(g="/".join(str(g) for g in sorted(groups, reverse=True)) or "-") + left


def _fp8(model: nn.Module) -> str:
    rowwise = fp8.scaled_mm_works(next(model.parameters()).device, rowwise=True) is None
    left = replace_linears(model, lambda lin: Fp8Linear(lin, rowwise)
                           if lin.in_features % 16 == 0 == lin.out_features % 16 else None,
                           "dimensions not multiples of 16")
    return (FP8 + ("" if rowwise else "; this PyTorch's FP8 GEMM takes one scale a tensor here: row and channel "
                   "scales applied to its FP32 output") + left)


def for_variants(model: nn.Module, variants) -> str | None:
    """llm-serve's ``int8-weights``, ``int4-weights`` or ``fp8-weights`` applied to ``model``; None for
    none of them."""
    kind = next((k for k in ("int8", "int4", "fp8") if f"{k}-weights" in variants), None)
    return quantize(model, kind) if kind else None
