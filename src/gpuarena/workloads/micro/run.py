"""The micro-benchmarks' bodies: setup and step (their facts are in spec.py)."""

from __future__ import annotations

import torch

from gpuarena.store.flags import nan_flag
from gpuarena.workloads.base import Workload
from gpuarena.workloads.micro.spec import (
    MAX_SETS,
    ROTATE_BYTES,
    DeviceToHostSpec,
    HostToDeviceSpec,
    MatmulSpec,
    MemBandwidthSpec,
    _HostCopySpec,
)
from gpuarena.workloads.precision import FP8_MIN_CAPABILITY


def _device_capability(device) -> tuple[int, int] | None:
    if device.type != "cuda":
        return None
    return torch.cuda.get_device_capability(device)


class Matmul(MatmulSpec, Workload):
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

    def precision(self) -> str:
        return self.p["dtype"]

    def check(self) -> list:
        if self.out is not None and not torch.isfinite(self.out.float()).all().item():
            return [nan_flag("matmul output has NaN/inf")]
        return []

    def extra(self) -> dict:
        return {"sets": self.sets, "shape": [self.p["m"], self.p["n"], self.p["k"]],
                "note": "one item = one m x n x k matmul = 2mnk FLOP; see tflops for the rate"}


class MemBandwidth(MemBandwidthSpec, Workload):
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

    def extra(self) -> dict:
        return {"bytes_per_copy": self.nbytes, "counted": "read + write (2 x bytes copied)"}


class _HostCopy(_HostCopySpec, Workload):
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

    def extra(self) -> dict:
        return {"bytes_per_copy": self.nbytes, "pinned": self.pinned}


class HostToDevice(HostToDeviceSpec, _HostCopy):
    """HostToDevice's body: its spec's facts and the shared setup/step."""


class DeviceToHost(DeviceToHostSpec, _HostCopy):
    """DeviceToHost's body: its spec's facts and the shared setup/step."""
