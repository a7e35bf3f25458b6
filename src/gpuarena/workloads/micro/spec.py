"""Micro-benchmarks: the ceilings that bound (and explain) every other workload.

- ``matmul``: dense GEMM TFLOP/s per dtype.  Its best result on a device is the
  "ceiling" that measure/ceiling.py divides every other result's TFLOP/s by.
- ``membw``: device-to-device copy, GB/s counting the read and the write.
- ``h2d`` / ``d2h``: host-to-device and device-to-host copies, pinned or pageable.

On the CPU the same code runs against host memory at tiny sizes (for tests);
the figures only mean something on a GPU.
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from gpuarena.store.figures import Bytes, Count, Figures, Text
from gpuarena.workloads.spec import Param, WorkloadSpec

MATMUL_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8")
# Input sets rotated through so that L2 does not hold the operands between matmuls
# (mamf-finder / triton do_bench flush L2 for the same reason).  Enough sets to
# span this many bytes: H100/H200 L2 is 50 MB, so 4x that is safely out of cache.
ROTATE_BYTES = 200 * 2**20
MAX_SETS = 16


class MatmulFigures(Figures):
    sets: Count = None
    shape: Optional[list[Optional[int]]] = Field(None, max_length=8)    # [m, n, k]
    note: Text = None


class MemBandwidthFigures(Figures):
    bytes_per_copy: Bytes = None
    counted: Text = None


class HostCopyFigures(Figures):
    bytes_per_copy: Bytes = None
    pinned: Optional[bool] = None


class MatmulSpec(WorkloadSpec):
    name = "matmul"
    runner = "gpuarena.workloads.micro.run:Matmul"
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

    @classmethod
    def flops(cls, params: dict) -> float:
        return 2.0 * params["m"] * params["n"] * params["k"]

    @classmethod
    def executed_precision(cls, variants: frozenset[str], arch: str | None,
                           params: dict | None = None) -> dict[str, str]:
        """The operands' dtype, whatever the recipe: that is what this workload varies."""
        return {"matmul": (params or {}).get("dtype", "bf16")}

    @classmethod
    def label(cls, params: dict) -> str:
        return f"matmul {params.get('dtype')}"


class MemBandwidthSpec(WorkloadSpec):
    name = "membw"
    runner = "gpuarena.workloads.micro.run:MemBandwidth"
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

    @classmethod
    def executed_precision(cls, variants, arch, params=None) -> dict[str, str]:
        return {}   # a copy does no arithmetic


class _HostCopySpec(WorkloadSpec):
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

    @classmethod
    def executed_precision(cls, variants, arch, params=None) -> dict[str, str]:
        return {}   # a copy does no arithmetic

    @classmethod
    def label(cls, params: dict) -> str:
        return f"{cls.name} {'pinned' if params.get('pinned', True) else 'pageable'}"


class HostToDeviceSpec(_HostCopySpec):
    name = "h2d"
    runner = "gpuarena.workloads.micro.run:HostToDevice"
    version = 1
    description = "host-to-device copy (pinned or pageable), GB/s"
    source = "article 001's tip: overlap H2D copies (non_blocking=True needs pinned memory)"
    to_device = True


class DeviceToHostSpec(_HostCopySpec):
    name = "d2h"
    runner = "gpuarena.workloads.micro.run:DeviceToHost"
    version = 1
    description = "device-to-host copy (pinned or pageable), GB/s"
    source = "the other direction of article 001's H2D tip"
    to_device = False
