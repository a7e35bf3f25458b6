"""Micro-benchmarks: the ceilings that bound (and explain) every other workload.

- ``matmul``: dense GEMM TFLOP/s per dtype.  Its best result on a device is the
  "ceiling" that measure/ceiling.py divides every other result's TFLOP/s by.
- ``membw``: device-to-device copy, GB/s counting the read and the write.
- ``h2d`` / ``d2h``: host-to-device and device-to-host copies, pinned or pageable.

On the CPU the same code runs against host memory at tiny sizes (for tests);
the figures only mean something on a GPU.
"""

from __future__ import annotations

import torch

from gpuarena.workloads.base import Param, Workload
from gpuarena.workloads.precision import FP8_MIN_CAPABILITY
from gpuarena.store.flags import nan_flag
from gpuarena.store.workload_figures import HostCopyFigures, MatmulFigures, MemBandwidthFigures

MATMUL_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8")
# Input sets rotated through so that L2 does not hold the operands between matmuls
# (mamf-finder / triton do_bench flush L2 for the same reason).  Enough sets to
# span this many bytes: H100/H200 L2 is 50 MB, so 4x that is safely out of cache.
ROTATE_BYTES = 200 * 2**20
MAX_SETS = 16


def _device_capability(device) -> tuple[int, int] | None:
    if device.type != "cuda":
        return None
    return torch.cuda.get_device_capability(device)


class Matmul(Workload):
    name = "matmul"
    figures = MatmulFigures
    version = 1
    description = "dense C = A @ B of m x k by k x n, TFLOP/s by dtype (fp8 through torch._scaled_mm)"
    item = "matmul"
    source = "the ceiling every share-of-peak figure divides by (issue 3)"
    kind = "micro"
    dominant_op = "matmul"
    device_figure = "compute-peak"
    params = (
        Param("dtype", str, "bf16", "operand dtype; tf32 = fp32 tensors with TF32 matmul on",
              choices=MATMUL_DTYPES),
        Param("m", int, 8192, "rows of A and C", tiny=64, min=1, max=131072),
        Param("n", int, 8192, "columns of B and C", tiny=64, min=1, max=131072),
        Param("k", int, 8192, "inner dimension", tiny=64, min=1, max=131072),
        Param("sets", int, 0, "input sets rotated through (0: enough to exceed L2)", min=0, max=MAX_SETS),
    )
    variants = {"seed": "torch.matmul (cuBLAS/cuBLASLt) with the chosen dtype, nothing else"}
    default_warmup = 20
    default_steps = 50
    tiny_steps = 5

    def setup(self) -> None:
        dtype, m, n, k = self.p["dtype"], self.p["m"], self.p["n"], self.p["k"]
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        if dtype == "fp8":
            cap = _device_capability(self.device)
            if cap is None or cap < FP8_MIN_CAPABILITY:
                have = f"compute capability {cap[0]}.{cap[1]}" if cap else self.device.type
                raise RuntimeError(f"fp8 matmul needs a CUDA GPU of compute capability >= 8.9 "
                                   f"(Ada/Hopper or newer); this device is {have}")
        torch_dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16,
                       "fp16": torch.float16, "fp8": torch.bfloat16}[dtype]
        elem = 1 if dtype == "fp8" else torch.empty((), dtype=torch_dtype).element_size()
        per_set = (m * k + k * n) * elem
        sets = self.p["sets"] or max(1, min(MAX_SETS, -(-ROTATE_BYTES // per_set)))
        self.sets = sets
        self.a, self.b = [], []
        for _ in range(sets):
            a = torch.randn(m, k, device=self.device, dtype=torch_dtype)
            b = torch.randn(n, k, device=self.device, dtype=torch_dtype)
            if dtype == "fp8":
                # _scaled_mm wants A row-major and B column-major, both e4m3.
                a = a.to(torch.float8_e4m3fn)
                b = b.to(torch.float8_e4m3fn)
            self.a.append(a)
            self.b.append(b.t())  # k x n view; column-major for fp8, a transposed GEMM for the rest
        self.scale = torch.ones((), device=self.device, dtype=torch.float32)
        self.i = 0
        self.out = None

    def step(self) -> None:
        a, b = self.a[self.i], self.b[self.i]
        self.i = (self.i + 1) % self.sets
        if self.p["dtype"] == "fp8":
            self.out = torch._scaled_mm(a, b, scale_a=self.scale, scale_b=self.scale, out_dtype=torch.bfloat16)
        else:
            self.out = torch.matmul(a, b)

    def items_per_step(self) -> float:
        return 1.0

    @classmethod
    def flops(cls, params: dict) -> float:
        return 2.0 * params["m"] * params["n"] * params["k"]

    @classmethod
    def executed_precision(cls, variants: frozenset[str], arch: str | None,
                           params: dict | None = None) -> dict[str, str]:
        """The operands' dtype, whatever the recipe: that is what this workload varies."""
        return {"matmul": (params or {}).get("dtype", "bf16")}

    def precision(self) -> str:
        return self.p["dtype"]

    def check(self) -> list:
        if self.out is not None and not torch.isfinite(self.out.float()).all().item():
            return [nan_flag("matmul output has NaN/inf")]
        return []

    def extra(self) -> dict:
        return {"sets": self.sets, "shape": [self.p["m"], self.p["n"], self.p["k"]],
                "note": "one item = one m x n x k matmul = 2mnk FLOP; see tflops for the rate"}

    @classmethod
    def label(cls, params: dict) -> str:
        return f"matmul {params.get('dtype')}"


class MemBandwidth(Workload):
    name = "membw"
    figures = MemBandwidthFigures
    version = 1
    description = "device-to-device copy of size_mb; GB/s counts the bytes read plus the bytes written"
    item = "GB"
    unit = "GB/s"
    source = "memory ceiling for the share-of-peak figures (issue 3)"
    kind = "micro"
    device_figure = "memory-bandwidth"
    axis = "size_mb"
    dominant_op = "copy"
    params = (
        Param("size_mb", int, 4096, "bytes copied per step, in MiB", tiny=8, min=1, max=1_000_000),
    )
    variants = {"seed": "dst.copy_(src) on one device"}
    default_warmup = 5
    default_steps = 20
    tiny_steps = 5

    def setup(self) -> None:
        self.nbytes = self.p["size_mb"] * 2**20
        self.src = torch.ones(self.nbytes, dtype=torch.uint8, device=self.device)
        self.dst = torch.empty_like(self.src)

    def step(self) -> None:
        self.dst.copy_(self.src)

    def items_per_step(self) -> float:
        return 2 * self.p["size_mb"] * 2**20 / 1e9

    def precision(self) -> str:
        return "n/a"

    @classmethod
    def executed_precision(cls, variants, arch, params=None) -> dict[str, str]:
        return {}   # a copy does no arithmetic

    def extra(self) -> dict:
        return {"bytes_per_copy": self.nbytes, "counted": "read + write (2 x bytes copied)"}


class _HostCopy(Workload):
    """Shared by h2d and d2h: one copy of size_mb between host and device per step."""

    figures = HostCopyFigures
    item = "GB"
    unit = "GB/s"
    kind = "micro"
    device_figure = "host-link"
    axis = "size_mb"
    dominant_op = "copy"
    params = (
        Param("size_mb", int, 1024, "bytes copied per step, in MiB", tiny=8, min=1, max=1_000_000),
        Param("pinned", bool, True, "page-locked host buffer (pageable when false)"),
    )
    variants = {"seed": "tensor.copy_ between a host buffer and the device, non_blocking when pinned"}
    default_warmup = 3
    default_steps = 10
    tiny_steps = 5
    to_device: bool = True

    def setup(self) -> None:
        self.nbytes = self.p["size_mb"] * 2**20
        pinned = self.p["pinned"]
        if pinned and self.device.type != "cuda":
            # Page-locking needs a CUDA driver; on the CPU this is a host-to-host copy.
            self.ctx.notes.append("pinned ignored: no CUDA device, host-to-host copy measured")
            pinned = False
        self.pinned = pinned
        host = torch.ones(self.nbytes, dtype=torch.uint8, pin_memory=pinned)
        dev = torch.empty(self.nbytes, dtype=torch.uint8, device=self.device)
        self.src, self.dst = (host, dev) if self.to_device else (dev, host)

    def step(self) -> None:
        self.dst.copy_(self.src, non_blocking=self.pinned)

    def items_per_step(self) -> float:
        return self.p["size_mb"] * 2**20 / 1e9

    def precision(self) -> str:
        return "n/a"

    @classmethod
    def executed_precision(cls, variants, arch, params=None) -> dict[str, str]:
        return {}   # a copy does no arithmetic

    def extra(self) -> dict:
        return {"bytes_per_copy": self.nbytes, "pinned": self.pinned}

    @classmethod
    def label(cls, params: dict) -> str:
        return f"{cls.name} {'pinned' if params.get('pinned', True) else 'pageable'}"


class HostToDevice(_HostCopy):
    name = "h2d"
    version = 1
    description = "host-to-device copy (pinned or pageable), GB/s"
    source = "article 001's tip: overlap H2D copies (non_blocking=True needs pinned memory)"
    to_device = True


class DeviceToHost(_HostCopy):
    name = "d2h"
    version = 1
    description = "device-to-host copy (pinned or pageable), GB/s"
    source = "the other direction of article 001's H2D tip"
    to_device = False
