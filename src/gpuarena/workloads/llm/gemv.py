"""A matrix-vector product for the one-row decode (llm-serve's ``gemv`` variant, issue 23).

``matvec(x, weight, scale)`` is ``F.linear(x, weight.to(x.dtype)) * scale`` for one activation row:
weights in bf16/fp16, or FP8/int8 with one scale per output channel (weight_only.py's layers).

On a GPU it is a Triton kernel registered as a custom op (``torch.library.triton_op``), so a
compiled, CUDA-graphed decode step calls it as it is.  Each program reduces ``BLOCK_N`` output rows
over the whole input, loading each chunk of the input once for all of them and streaming the
weights once (``evict_first``).  Why: inductor's own one-row reduction gives each output row a
program of its own and recomputes the input's producer (an RMSNorm, the SwiGLU product) for every
row.  On the H200 (session 11) it read wide matrices at the copy rate but not those with few output
rows or a long reduction: llama3-8b's down projection (4,096 outputs, each over 14,336) at 2.9 TB/s
in bf16 and 2.2 TB/s in FP8, its QKV and output projections at 1.5 TB/s in FP8.

On a CPU, and where Triton is missing, the op is the reference formula.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

try:
    import triton
    import triton.language as tl
except ImportError:     # pragma: no cover - torch's Linux wheels bring triton
    triton = None

OP = "gpuarena::matvec"


def reference(x: torch.Tensor, weight: torch.Tensor, scale: torch.Tensor | None) -> torch.Tensor:
    y = F.linear(x.reshape(1, -1), weight.to(x.dtype))
    return (y * scale.reshape(1, -1).to(x.dtype) if scale is not None else y).reshape(weight.shape[0])


KERNEL_DTYPES = (torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn, torch.int8)
NARROW = 8192      # the most output rows a matrix may have for ``OneRowLinear`` to take its product
DESCRIPTION = (f"one-row products of matrices with <= {NARROW} outputs through gpuarena's Triton matrix-vector "
               "kernel (llm/gemv.py), wider ones through inductor's reduction")


def config(n: int, k: int, itemsize: int) -> tuple[int, int, int, int]:
    """(BLOCK_N, BLOCK_K, num_warps, num_stages): the fastest of 60 tile configurations on the H200
    for llama3-8b's narrow matrices (benchmarks/gemv.py, session 12): 8 rows of 1,024 one-byte
    weights a program (the output and down projections in FP8), 2 rows of 1,024 two-byte ones (the
    QKV projection in bf16).  ``BLOCK_K`` halves until it divides ``k`` (16 at least: the kernel
    masks the last chunk)."""
    block_n, block_k = (8, 1024) if itemsize == 1 else (2, 1024)
    while block_k > 16 and k % block_k:
        block_k //= 2
    return block_n, block_k, 4, 1


if triton is not None:
    @triton.jit
    def _matvec_kernel(x_ptr, w_ptr, s_ptr, y_ptr, N, K, HAS_SCALE: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
        live = rows < N
        acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            cols = k0 + tl.arange(0, BLOCK_K)
            inside = cols < K
            x = tl.load(x_ptr + cols, mask=inside, other=0.0, eviction_policy="evict_last").to(tl.float32)
            w = tl.load(w_ptr + rows[:, None] * K + cols[None, :], mask=live[:, None] & inside[None, :],
                        other=0.0, eviction_policy="evict_first")
            acc += w.to(tl.float32) * x[None, :]
        y = tl.sum(acc, axis=1)
        if HAS_SCALE:
            y = y * tl.load(s_ptr + rows, mask=live, other=0.0).to(tl.float32)
        tl.store(y_ptr + rows, y.to(y_ptr.dtype.element_ty), mask=live)

    def launch(x, weight, scale, y, cfg=None):
        """The kernel on ``x`` [K] (contiguous), ``weight`` [N, K] (contiguous), into ``y`` [N]; ``cfg``
        overrides ``config`` (benchmarks/gemv.py sweeps it)."""
        if not weight.is_contiguous() or (scale is not None and not scale.is_contiguous()):
            raise ValueError("gemv: the kernel reads a row-major weight and scale; this one is strided")
        n, k = weight.shape
        bn, bk, warps, stages = cfg or config(n, k, weight.element_size())
        kernel = torch.library.wrap_triton(_matvec_kernel)
        kernel[(triton.cdiv(n, bn),)](x, weight, scale if scale is not None else y, y, n, k,
                                      HAS_SCALE=scale is not None, BLOCK_N=bn, BLOCK_K=bk,
                                      num_warps=warps, num_stages=stages)
        return y

    @torch.library.triton_op(OP, mutates_args=())
    def _matvec(x: torch.Tensor, weight: torch.Tensor, scale: torch.Tensor | None) -> torch.Tensor:
        y = torch.empty(weight.shape[0], device=x.device, dtype=x.dtype)
        return launch(x.reshape(-1).contiguous(), weight, scale, y)

    @_matvec.register_kernel("cpu")
    def _matvec_cpu(x, weight, scale):
        return reference(x, weight, scale)
else:   # pragma: no cover
    @torch.library.custom_op(OP, mutates_args=())
    def _matvec(x: torch.Tensor, weight: torch.Tensor, scale: torch.Tensor | None) -> torch.Tensor:
        return reference(x, weight, scale)

    @_matvec.register_fake
    def _matvec_fake(x, weight, scale):
        return x.new_empty(weight.shape[0])


class OneRowLinear(nn.Module):
    """A linear layer (``nn.Linear``, or weight_only's int8 and FP8 layers: a 2-d ``weight`` and an
    optional ``scales`` per output) whose one-row product under torch.compile on a GPU is ``matvec``;
    any other call is the layer's own."""

    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner
        self.in_features, self.out_features = inner.in_features, inner.out_features

    def forward(self, x):
        if x.is_cuda and x.numel() == self.in_features and torch.compiler.is_compiling():
            scales = getattr(self.inner, "scales", None)
            return matvec(x, self.inner.weight, scales.reshape(-1) if scales is not None else None)
        return self.inner(x)


def use(model: nn.Module) -> int:
    """Every linear layer of ``model`` with at most ``NARROW`` outputs and a plain 2-d row-major weight
    (bf16/fp16/fp32, int8 or FP8; not int4's packed one) wrapped in ``OneRowLinear``; how many."""
    wrapped = 0
    for mod in list(model.modules()):
        if isinstance(mod, OneRowLinear):
            continue                    # its layer is wrapped already
        for name, child in list(mod.named_children()):
            w = getattr(child, "weight", None)
            shape = (getattr(child, "out_features", -1), getattr(child, "in_features", -1))
            # an embedding has no in/out_features and a wrapper no weight: neither matches
            if (isinstance(w, torch.Tensor) and tuple(w.shape) == shape and shape[0] <= NARROW
                    and w.dtype in KERNEL_DTYPES and w.is_contiguous()):
                setattr(mod, name, OneRowLinear(child))
                wrapped += 1
    return wrapped


def available(device: torch.device) -> str | None:
    """None where the kernel runs (a CUDA GPU with Triton, or a CPU, where the op is the reference
    formula); else why not."""
    if device.type == "cpu":
        return None
    if triton is None:
        return "gemv: Triton is not installed (it comes with PyTorch's Linux CUDA wheels)"
    return None if device.type == "cuda" else f"gemv: a CUDA GPU or the CPU, not {device.type}"


def matvec(x: torch.Tensor, weight: torch.Tensor, scale: torch.Tensor | None = None) -> torch.Tensor:
    """``x`` (one row, any leading shape of size 1) times ``weight.T``, times ``scale`` per output;
    shaped as ``x`` with the last dimension ``weight.shape[0]``.  A CPU tensor takes the reference
    formula as it is: under torch.compile inductor would trace the op into its Triton kernel, which
    has no CPU backend."""
    if not x.is_cuda:
        return reference(x, weight, scale).reshape(*x.shape[:-1], weight.shape[0])
    return torch.ops.gpuarena.matvec(x, weight, scale).reshape(*x.shape[:-1], weight.shape[0])
