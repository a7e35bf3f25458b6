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

Version 9 folds the RMSNorm before the QKV projection into the kernel (``fold_norms``): the product is
linear, so ``W (g * x / rms(x))`` is ``(W (g * x)) / rms(x)``, and each program sums ``x * x`` over the
input it loads anyway.  No norm kernel, no normalised row written and read back.  H200, session 13:
the bf16 decode step's kernels fell from 4,752 to 4,412 us with ``gemv`` (221.8 tokens/s), though in
isolation (benchmarks/gemv.py) the folded bf16 QKV product took 18.2 us against 16.0 for a norm then
the kernel: with 2 rows a program every program rereads the input and the norm's weight.

On a CPU, and where Triton is missing, the op is the reference formula.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from gpuarena.workloads.llm.engine_facts import NARROW
from gpuarena.workloads.llm.model import RMSNorm, rms_norm
from gpuarena.workloads.llm.weight_only import one_row

try:
    import triton
    import triton.language as tl
except ImportError:     # pragma: no cover - torch's Linux wheels bring triton
    triton = None

OP = "gpuarena::matvec"


def reference(x: torch.Tensor, weight: torch.Tensor, scale: torch.Tensor | None,
              norm_weight: torch.Tensor | None = None, eps: float = 0.0) -> torch.Tensor:
    x = rms_norm(x, norm_weight, eps) if norm_weight is not None else x
    y = F.linear(x.reshape(1, -1), weight.to(x.dtype))
    return (y * scale.reshape(1, -1).to(x.dtype) if scale is not None else y).reshape(weight.shape[0])


KERNEL_DTYPES = (torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn, torch.int8)


def config(n: int, k: int, itemsize: int) -> tuple[int, int, int, int]:
    """(BLOCK_N, BLOCK_K, num_warps, num_stages): the fastest of 60 tile configurations on the H200
    for llama3-8b's narrow matrices (benchmarks/gemv.py, session 12): 8 rows of 1,024 one-byte
    weights a program (the output and down projections in FP8); 2 rows of 1,024 two-byte ones for
    the bf16 QKV projection (6,144 outputs), 1 row and 3 pipeline stages for bf16's with 4,096
    outputs (the down projection's best; the output projection's was 1 x 512, 3 stages).
    ``BLOCK_K`` halves until it divides ``k`` (16 at least: the kernel masks the last chunk)."""
    block_n, block_k, stages = (8, 1024, 1) if itemsize == 1 else (1, 1024, 3) if n <= 4096 else (2, 1024, 1)
    while block_k > 16 and k % block_k:
        block_k //= 2
    return block_n, block_k, 4, stages


if triton is not None:
    @triton.jit
    def _matvec_kernel(x_ptr, w_ptr, s_ptr, g_ptr, y_ptr, N, K, eps, HAS_SCALE: tl.constexpr,
                       HAS_NORM: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
        live = rows < N
        acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
        squares = tl.zeros((BLOCK_K,), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            cols = k0 + tl.arange(0, BLOCK_K)
            inside = cols < K
            x = tl.load(x_ptr + cols, mask=inside, other=0.0, eviction_policy="evict_last").to(tl.float32)
            if HAS_NORM:    # the RMSNorm folded in: sum x * x, weight x by the norm's g
                squares += x * x
                x = x * tl.load(g_ptr + cols, mask=inside, other=0.0, eviction_policy="evict_last").to(tl.float32)
            w = tl.load(w_ptr + rows[:, None] * K + cols[None, :], mask=live[:, None] & inside[None, :],
                        other=0.0, eviction_policy="evict_first")
            acc += w.to(tl.float32) * x[None, :]
        y = tl.sum(acc, axis=1)
        if HAS_NORM:
            y = y * tl.rsqrt(tl.sum(squares, axis=0) / K + eps)
        if HAS_SCALE:
            y = y * tl.load(s_ptr + rows, mask=live, other=0.0).to(tl.float32)
        tl.store(y_ptr + rows, y.to(y_ptr.dtype.element_ty), mask=live)

    def launch(x, weight, scale, y, cfg=None, norm_weight=None, eps=0.0):
        """The kernel on ``x`` [K] (contiguous), ``weight`` [N, K] (contiguous), into ``y`` [N], with
        the RMSNorm of weight ``norm_weight`` [K] folded in if given; ``cfg`` overrides ``config``
        (benchmarks/gemv.py sweeps it)."""
        if not weight.is_contiguous() or (scale is not None and not scale.is_contiguous()):
            raise ValueError("gemv: the kernel reads a row-major weight and scale; this one is strided")
        n, k = weight.shape
        bn, bk, warps, stages = cfg or config(n, k, weight.element_size())
        kernel = torch.library.wrap_triton(_matvec_kernel)
        kernel[(triton.cdiv(n, bn),)](x, weight, scale if scale is not None else y,
                                      norm_weight if norm_weight is not None else y, y, n, k, eps,
                                      HAS_SCALE=scale is not None, HAS_NORM=norm_weight is not None,
                                      BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages)
        return y

    @torch.library.triton_op(OP, mutates_args=())
    def _matvec(x: torch.Tensor, weight: torch.Tensor, scale: torch.Tensor | None,
                norm_weight: torch.Tensor | None = None, eps: float = 0.0) -> torch.Tensor:
        y = torch.empty(weight.shape[0], device=x.device, dtype=x.dtype)
        g = norm_weight.contiguous() if norm_weight is not None else None
        return launch(x.reshape(-1).contiguous(), weight, scale, y, norm_weight=g, eps=eps)

    @_matvec.register_kernel("cpu")
    def _matvec_cpu(x, weight, scale, norm_weight=None, eps=0.0):
        return reference(x, weight, scale, norm_weight, eps)
else:   # pragma: no cover
    @torch.library.custom_op(OP, mutates_args=())
    def _matvec(x: torch.Tensor, weight: torch.Tensor, scale: torch.Tensor | None,
                norm_weight: torch.Tensor | None = None, eps: float = 0.0) -> torch.Tensor:
        return reference(x, weight, scale, norm_weight, eps)

    @_matvec.register_fake
    def _matvec_fake(x, weight, scale, norm_weight=None, eps=0.0):
        return x.new_empty(weight.shape[0])


class OneRowLinear(nn.Module):
    """A linear layer (``nn.Linear``, or weight_only's int8 and FP8 layers: a 2-d ``weight`` and an
    optional ``scales`` per output) whose one-row product under torch.compile is ``matvec``; any other
    call is the layer's own.  With ``fold`` set (``fold_norms``), the one row arrives un-normalised and
    the kernel applies that RMSNorm itself."""

    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner
        self.in_features, self.out_features = inner.in_features, inner.out_features
        self.fold: tuple[RMSNorm, ...] = ()     # held, not owned: the norm stays its block's parameter

    def forward(self, x):
        if one_row(x, self.in_features):
            scales = getattr(self.inner, "scales", None)
            norm = self.fold[0] if self.fold else None
            return matvec(x, self.inner.weight, scales.reshape(-1) if scales is not None else None,
                          norm.weight if norm is not None else None, norm.eps if norm is not None else 0.0)
        return self.inner(x)


class FoldedNorm(nn.Module):
    """A block's RMSNorm whose one row goes to a ``OneRowLinear`` that applies it: that row passes
    through as it is; any other input is normalised here."""

    def __init__(self, norm: RMSNorm):
        super().__init__()
        self.norm = norm

    def forward(self, x):
        return x if one_row(x, self.norm.weight.numel()) else self.norm(x)


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
    fold_norms(model)
    return wrapped


def fold_norms(model: nn.Module) -> int:
    """Every block whose attention's only input, its fused QKV projection (engine.fuse_projections),
    is a ``OneRowLinear``: the block's RMSNorm folded into that product; how many."""
    folded = 0
    for blk in model.modules():
        norm, qkv = getattr(blk, "attention_norm", None), getattr(getattr(blk, "attention", None), "wqkv", None)
        if type(norm) is RMSNorm and isinstance(qkv, OneRowLinear) and not qkv.fold:
            qkv.fold = (norm,)
            blk.attention_norm = FoldedNorm(norm)
            folded += 1
    return folded


def available(device: torch.device) -> str | None:
    """None where the kernel runs (a CUDA GPU with Triton, or a CPU, where the op is the reference
    formula); else why not."""
    if device.type == "cpu":
        return None
    if triton is None:
        return "gemv: Triton is not installed (it comes with PyTorch's Linux CUDA wheels)"
    return None if device.type == "cuda" else f"gemv: a CUDA GPU or the CPU, not {device.type}"


def matvec(x: torch.Tensor, weight: torch.Tensor, scale: torch.Tensor | None = None,
           norm_weight: torch.Tensor | None = None, eps: float = 0.0) -> torch.Tensor:
    """``x`` (one row, any leading shape of size 1), RMS-normalised with ``norm_weight`` if given, times
    ``weight.T``, times ``scale`` per output; shaped as ``x`` with the last dimension ``weight.shape[0]``.
    A CPU tensor takes the reference formula as it is: under torch.compile inductor would trace the op
    into its Triton kernel, which has no CPU backend."""
    if not x.is_cuda:
        return reference(x, weight, scale, norm_weight, eps).reshape(*x.shape[:-1], weight.shape[0])
    return torch.ops.gpuarena.matvec(x, weight, scale, norm_weight, eps).reshape(*x.shape[:-1], weight.shape[0])
