"""The collectives' bodies: setup, step and the result check (their facts are in spec.py)."""

from __future__ import annotations

from abc import abstractmethod

import torch

from gpuarena.workloads.base import Workload
from gpuarena.workloads.collectives.spec import (
    MIB,
    AllGatherSpec,
    AllReduceSpec,
    BroadcastSpec,
    ReduceScatterSpec,
    _CollectiveSpec,
    bandwidths,
    bus_factor,
)

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


class _Collective(_CollectiveSpec, Workload):
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


class AllReduce(AllReduceSpec, _Collective):
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


class AllGather(AllGatherSpec, _Collective):
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


class ReduceScatter(ReduceScatterSpec, _Collective):
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


class Broadcast(BroadcastSpec, _Collective):
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
