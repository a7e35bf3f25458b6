"""Collective bandwidth: all-reduce, all-gather, reduce-scatter, broadcast.

The articles' "AllReduce 40-60% slower on 8 GPUs" (A800 vs A100, DIGEST.md) is
this measurement.  Figures follow nccl-tests (doc/PERFORMANCE.md):

* size: the bytes of the operation -- the all-reduce and broadcast buffer, the
  all-gather's whole output, the reduce-scatter's whole input;
* algorithm bandwidth algbw = size / time per call (GB = 1e9 bytes);
* bus bandwidth busbw = algbw x factor, the factor that makes busbw comparable
  with the link's hardware bandwidth: all-reduce 2(n-1)/n, all-gather and
  reduce-scatter (n-1)/n, broadcast 1.

One item is a GB of ``size`` (unit GB/s), so the stored throughput *is* algbw;
a collective is as fast as its slowest rank (``rank_aggregate = "min"``).  The
timed calls move zeros (sums stay exact however many calls run); after timing
one call on known values is checked, and a wrong result fails the case.
"""

from __future__ import annotations

from typing import ClassVar

from gpuarena.store.figures import Bytes, Figures, Name, Rate, Ratio, Seconds
from gpuarena.workloads.spec import Param, WorkloadSpec

DTYPE_NAMES = ("float32", "bfloat16", "float16")
MIB = 2**20


def bus_factor(op: str, n: int) -> float:
    """nccl-tests' busbw / algbw factor for n ranks."""
    if n < 1:
        raise ValueError(f"n={n}: need at least one rank")
    if op == "allreduce":
        return 2 * (n - 1) / n
    if op in ("allgather", "reducescatter"):
        return (n - 1) / n
    if op == "broadcast":
        return 1.0
    raise ValueError(f"unknown collective {op!r}")


def bandwidths(size_bytes: float, time_per_call_s: float, op: str, n: int) -> tuple[float, float]:
    """(algbw, busbw) in GB/s (1e9 bytes), nccl-tests' definitions."""
    algbw = size_bytes / time_per_call_s / 1e9
    return algbw, algbw * bus_factor(op, n)


class CollectiveFigures(Figures):
    op: Name = None
    size_bytes: Bytes = None
    dtype: Name = None
    bus_factor: Ratio = None
    result_check: Name = None
    time_per_call_s: Seconds = None
    algbw_gbs: Rate = None
    busbw_gbs: Rate = None


class _CollectiveSpec(WorkloadSpec):
    op: ClassVar[str]
    figures = CollectiveFigures
    version = 1
    item = "GB"
    unit = "GB/s"
    source = "articles 000/001 (AllReduce on 8 GPUs); formulas from nccl-tests doc/PERFORMANCE.md"
    launcher = "torchrun"
    kind = "collective"
    axis = "size_mb"
    dominant_op = "copy"
    rank_aggregate = "min"
    rank_extra = ("result_check",)
    params = (
        Param("size_mb", float, 64.0, "message size in MiB (2^20 bytes), as nccl-tests counts it",
              tiny=0.25, min=1 / 1024, max=65536.0),
        Param("dtype", str, "float32", "element type", choices=DTYPE_NAMES),
    )
    variants = {"seed": "torch.distributed with the device's backend (NCCL on cuda, gloo on cpu)"}
    default_warmup = 5
    default_steps = 20
    tiny_warmup = 1
    tiny_steps = 3

    @classmethod
    def executed_precision(cls, variants, arch, params=None) -> dict[str, str]:
        return {}   # moving bytes; the reduction's adds are not what bounds it


class AllReduceSpec(_CollectiveSpec):
    name = "allreduce"
    runner = "gpuarena.workloads.collectives.run:AllReduce"
    op = "allreduce"
    device_figure = "allreduce-busbw"
    description = "all_reduce (sum) of size_mb in place; busbw = algbw x 2(n-1)/n"


class AllGatherSpec(_CollectiveSpec):
    name = "allgather"
    runner = "gpuarena.workloads.collectives.run:AllGather"
    op = "allgather"
    report_order = 2
    description = "all_gather_into_tensor: size_mb is the gathered output; busbw = algbw x (n-1)/n"


class ReduceScatterSpec(_CollectiveSpec):
    name = "reducescatter"
    runner = "gpuarena.workloads.collectives.run:ReduceScatter"
    op = "reducescatter"
    report_order = 1
    description = "reduce_scatter_tensor (sum): size_mb is the whole input; busbw = algbw x (n-1)/n"


class BroadcastSpec(_CollectiveSpec):
    name = "broadcast"
    runner = "gpuarena.workloads.collectives.run:Broadcast"
    op = "broadcast"
    report_order = 3
    description = "broadcast of size_mb from rank 0; busbw = algbw"
