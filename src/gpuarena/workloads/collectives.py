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

from abc import abstractmethod

import torch

from gpuarena.store.workload_figures import CollectiveFigures
from gpuarena.workloads.base import Param, Workload

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
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


class _Collective(Workload):
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
        Param("dtype", str, "float32", "element type", choices=tuple(DTYPES)),
    )
    variants = {"seed": "torch.distributed with the device's backend (NCCL on cuda, gloo on cpu)"}
    default_warmup = 5
    default_steps = 20
    tiny_warmup = 1
    tiny_steps = 3

    def setup(self) -> None:
        import torch.distributed as dist

        self.dist = dist
        self.n = self.ctx.world_size
        self.dtype = DTYPES[self.p["dtype"]]
        elem = torch.tensor([], dtype=self.dtype).element_size()
        # A count the ranks split evenly (all-gather, reduce-scatter need it).
        count = max(self.n, round(self.p["size_mb"] * MIB / elem) // self.n * self.n)
        self.size_bytes = count * elem
        self.buffers(count)

    @abstractmethod
    def buffers(self, count: int) -> None:
        """Allocate this collective's input and output for ``count`` elements per rank."""

    def items_per_step(self) -> float:
        return self.size_bytes / 1e9

    def check(self) -> list[str]:
        """One call on known values; raises (the case fails) if the result is wrong."""
        got, want = self.checked_call(self.ctx.rank + 1)
        tol = 0 if self.dtype == torch.float32 else 1e-2
        if not torch.allclose(got.float(), want.float(), rtol=tol, atol=0):
            bad = (got.float() - want.float()).abs().argmax().item()
            raise RuntimeError(f"{self.name} result is wrong on rank {self.ctx.rank}: element {bad} is "
                               f"{got.flatten()[bad].item()}, expected {want.flatten()[bad].item()}")
        return []

    @classmethod
    def executed_precision(cls, variants, arch, params=None) -> dict[str, str]:
        return {}   # moving bytes; the reduction's adds are not what bounds it

    def extra(self) -> dict:
        return {"op": self.op, "size_bytes": self.size_bytes, "dtype": self.p["dtype"],
                "bus_factor": bus_factor(self.op, self.n), "result_check": "passed"}

    @classmethod
    def finalize(cls, result: dict, per_rank: list[dict], world_size: int) -> None:
        """algbw, busbw and time per call of the slowest rank (runner/rank.py calls this)."""
        extra = result["extra"]
        time_per_call = result["latency"]["median"]
        algbw, busbw = bandwidths(extra["size_bytes"], time_per_call, cls.op, world_size)
        extra.update(time_per_call_s=time_per_call, algbw_gbs=algbw, busbw_gbs=busbw)
        extra["result_check"] = "passed" if all(
            (r.get("extra") or {}).get("result_check") == "passed" for r in per_rank) else "failed"


class AllReduce(_Collective):
    name = "allreduce"
    op = "allreduce"
    device_figure = "allreduce-busbw"
    description = "all_reduce (sum) of size_mb in place; busbw = algbw x 2(n-1)/n"

    def buffers(self, count):
        self.buf = torch.zeros(count, dtype=self.dtype, device=self.device)

    def step(self):
        self.dist.all_reduce(self.buf)

    def checked_call(self, value):
        # Rank r holds r+1: the sum is n(n+1)/2 everywhere.
        self.buf.fill_(value)
        self.dist.all_reduce(self.buf)
        got = self.buf.clone()
        self.buf.zero_()
        return got, torch.full_like(got, self.n * (self.n + 1) / 2)


class AllGather(_Collective):
    name = "allgather"
    op = "allgather"
    report_order = 2
    description = "all_gather_into_tensor: size_mb is the gathered output; busbw = algbw x (n-1)/n"

    def buffers(self, count):
        self.out = torch.zeros(count, dtype=self.dtype, device=self.device)
        self.inp = torch.zeros(count // self.n, dtype=self.dtype, device=self.device)

    def step(self):
        self.dist.all_gather_into_tensor(self.out, self.inp)

    def checked_call(self, value):
        # Rank r sends r+1: chunk k of the output holds k+1.
        self.inp.fill_(value)
        self.dist.all_gather_into_tensor(self.out, self.inp)
        want = torch.arange(1, self.n + 1, device=self.device, dtype=self.dtype).repeat_interleave(self.inp.numel())
        return self.out.clone(), want


class ReduceScatter(_Collective):
    name = "reducescatter"
    op = "reducescatter"
    report_order = 1
    description = "reduce_scatter_tensor (sum): size_mb is the whole input; busbw = algbw x (n-1)/n"

    def buffers(self, count):
        self.inp = torch.zeros(count, dtype=self.dtype, device=self.device)
        self.out = torch.zeros(count // self.n, dtype=self.dtype, device=self.device)

    def step(self):
        self.dist.reduce_scatter_tensor(self.out, self.inp)

    def checked_call(self, value):
        # Rank r puts (r+1)(k+1) in chunk k: rank r receives (r+1) x n(n+1)/2.
        chunk = self.out.numel()
        k = torch.arange(1, self.n + 1, device=self.device, dtype=torch.float32).repeat_interleave(chunk)
        self.inp.copy_((k * value).to(self.dtype))
        self.dist.reduce_scatter_tensor(self.out, self.inp)
        got = self.out.clone()
        self.inp.zero_()
        return got, torch.full_like(got, value * self.n * (self.n + 1) / 2)


class Broadcast(_Collective):
    name = "broadcast"
    op = "broadcast"
    report_order = 3
    description = "broadcast of size_mb from rank 0; busbw = algbw"

    def buffers(self, count):
        self.buf = torch.zeros(count, dtype=self.dtype, device=self.device)

    def step(self):
        self.dist.broadcast(self.buf, src=0)

    def checked_call(self, value):
        # Rank r holds r+1 before; everyone holds rank 0's 1 after.
        self.buf.fill_(value)
        self.dist.broadcast(self.buf, src=0)
        got = self.buf.clone()
        self.buf.zero_()
        return got, torch.ones_like(got)
