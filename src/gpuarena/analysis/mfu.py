"""MFU, computed when a result is read: the model TFLOP/s a result achieved per GPU over the
catalog's dense peak for its precision.

A record holds what its run measured: FLOPs per item, items/s, TFLOP/s (over all its GPUs)
and the GPU's name.  The peak it is divided by is a catalog fact, and a catalog fact can be
corrected; so the share is worked out here each time a result is read, never frozen into
the record (llm-train records written before this carry an ``extra.mfu``: it is ignored,
and recomputed the same way).  FP8 MFU is often quoted against the bf16 peak:
``mfu_vs_bf16`` gives that share.
"""

from __future__ import annotations

from gpuarena.data import catalog
from gpuarena.errors import UserError


def share_of_peak(r: dict, precision: str | None = None) -> float | None:
    """Achieved TFLOP/s per GPU over the catalog's dense peak for ``precision`` (default: the
    result's own; PyTorch's default precision counts as FP32).  None without a FLOP rate, off
    the catalog (a CPU, an unlisted card) or for a precision without a peak."""
    g = catalog.find(r.get("device_name") or "") if r.get("tflops") else None
    try:
        peak = g.peak(precision or r.get("precision") or "default") if g else None
    except UserError:            # "n/a": a copy has no FLOP rate
        return None
    return r["tflops"] / (r.get("gpus") or 1) / peak if peak else None


def mfu(r: dict) -> float | None:
    """Model FLOP utilisation at the executed precision's peak (FP8 for an FP8 recipe)."""
    return share_of_peak(r)


def mfu_vs_bf16(r: dict) -> float | None:
    """The same model TFLOP/s over the bf16 peak (how FP8 MFU is often quoted)."""
    return share_of_peak(r, "bf16")
