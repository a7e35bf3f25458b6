"""The roofline of one workload on one GPU: F / P(g) against B / BW(g) (see analysis/physics/limits.py).

F: FLOPs per item (the workload class's ``flops``); P(g): the catalog's dense peak at the
precision the arithmetic executes as on g's generation (the class's ``peak_precision``);
B: the estimated DRAM traffic per item (the class's ``bytes_per_item``; None: compute alone
bounds it); BW(g): the catalog's memory bandwidth.  The compute time of the roofline runs at the peak
the card sustains under its power limit (analysis/rows/power.py: the A100 PCIe cannot hold the clock its
peak is quoted at); the datasheet peak still bounds what is impossible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuarena.store.flags import diverged
from gpuarena.analysis.rows import power
from gpuarena.analysis.rows import precision as P
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.safeio import MIN_MAGNITUDE

CONDITIONS = {"batch_size": "batch_size", "seq_len": "seq_len", "image_size": "image_size",
              "steps": "inference_steps"}
ELEMENT_BYTES = {"fp8": 1, "int8": 1, "bf16": 2, "fp16": 2}   # else 4: FP32 tensors (TF32 math reads FP32)


def precision_class(prec: str) -> str:
    """Precisions that share a peak: BF16 and FP16 run on the same tensor cores at the same rate."""
    return "fp16/bf16" if prec in ("bf16", "fp16") else prec


def _workload(workload: str):
    from gpuarena.workloads import registry

    return registry.get(workload)


def workload_params(workload: str, given: dict) -> dict:
    """The workload's parameters with a claim's conditions applied (unknown ones refused)."""
    cls = _workload(workload)
    known = cls.param_map()
    params = {}
    for key, name in CONDITIONS.items():
        v = given.get(key)
        if v in (None, ""):
            continue
        try:
            fv = float(v)
        except (TypeError, ValueError):
            raise UserError(f"{key} {v!r}: must be a whole number") from None
        if not math.isfinite(fv) or fv < 1 or int(fv) != fv:
            raise UserError(f"{key} {v!r}: must be a whole number >= 1")
        if name not in known:
            raise UserError(f"{workload} has no {key} condition (it takes: "
                            + ", ".join(k for k, n in CONDITIONS.items() if n in known) + ")")
        params[name] = int(fv)
    return cls.resolve_params(params)


def claim_number(claim: dict, key: str, positive: bool = True) -> float | None:
    """A number a claim states (check, the LLM claims): None when absent, else finite, positive, not subnormal."""
    v = claim.get(key)
    if v in (None, ""):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise UserError(f"claim {key} {v!r}: not a number") from None
    if not math.isfinite(x) or (positive and x <= 0) or (x != 0 and abs(x) < MIN_MAGNITUDE):
        raise UserError(f"claim {key} {v!r}: must be a finite positive number, at least {MIN_MAGNITUDE:g}")
    return x


def claim_gpus(claim: dict) -> int:
    """A claim's GPU count: 1 when absent, else a whole number >= 1 (0.5 divided by zero, 2.7 became 2)."""
    x = claim_number(claim, "gpus")
    if x is None:
        return 1
    if x != int(x) or x < 1:
        raise UserError(f"claim gpus {claim.get('gpus')!r}: must be a whole number of GPUs, at least 1")
    return int(x)


@dataclass(frozen=True)
class Roof:
    """The roofline of one workload at given parameters and request on one GPU."""
    gpu: catalog.GPU
    executed: str            # the precision whose peak bounds it
    peak_tflops: float
    flops: float             # per item
    bytes: float | None      # per item, estimated
    t_compute: float         # s per item at peak
    t_memory: float          # s per item at full bandwidth (0 when bytes unknown)
    t_sustained: float = 0.0  # s per item at the peak sustained under the power limit (>= t_compute)

    @property
    def time(self) -> float:
        return max(self.t_compute, self.t_sustained, self.t_memory)

    @property
    def bound_by(self) -> str:
        return "memory" if self.t_memory > max(self.t_compute, self.t_sustained) else "compute"

    @property
    def peak_throughput(self) -> float:
        """Items/s at the executed precision's peak: above it a claim is impossible."""
        return 1.0 / self.t_compute

    def attainment(self, throughput: float) -> float:
        return self.time * throughput

    def share_of_peak(self, throughput: float) -> float:
        return self.t_compute * throughput


def roof(workload: str, g: catalog.GPU, request: str, params: dict) -> Roof:
    """The roofline of ``workload`` at ``params`` (resolved) on ``g`` for a precision request."""
    cls = _workload(workload)
    f = cls.flops(params)
    if not f:
        settings = ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
        raise UserError(f"workload {workload!r} has no FLOP count at these settings ({settings}), "
                        "so its figures cannot be judged")
    prec = P.peak_precision(workload, request, P.arch_of(g))
    peak = g.peaks.get(prec)
    if not peak:
        raise UserError(f"{g.name} has no {P.NAMES.get(prec, prec)} peak in the catalog; it has: "
                        f"{', '.join(g.peaks)}")
    b = cls.bytes_per_item(params, ELEMENT_BYTES.get(request, 4))
    bw = g.memory_bandwidth_gbs
    t_mem = b / (bw * 1e9) if (b and bw) else 0.0
    return Roof(g, prec, peak, float(f), float(b) if b else None, f / (peak * 1e12), t_mem,
                f / (peak * power.sustained_fraction(g) * 1e12))


def is_finite_result(r) -> bool:
    """A result a decision may rest on: ok, finite output (its typed NaN flag), a finite throughput."""
    return (r.status == "ok" and bool(r.throughput_median) and math.isfinite(r.throughput_median)
            and not diverged(r))
