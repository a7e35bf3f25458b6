"""MFU, computed when a result is read: the model TFLOP/s a result achieved per GPU over the
catalog's dense peak at the precision its recipe executed (analysis/derived.share_of_peak, the
one share of peak every reader uses).

A record holds what its run measured: FLOPs per item, items/s, TFLOP/s (over all its GPUs)
and the GPU's name.  The peak it is divided by is a catalog fact, and a catalog fact can be
corrected; so the share is worked out here each time a result is read, never frozen into
the record (llm-train records written before this carry an ``extra.mfu``: it is ignored,
and recomputed the same way).  FP8 MFU is often quoted against the bf16 peak:
``mfu_vs_bf16`` gives that share.
"""

from __future__ import annotations

from gpuarena.analysis.rows.derived import share_of_peak
from gpuarena.data import catalog
from gpuarena.errors import UserError


def mfu(r) -> float | None:
    """Model FLOP utilisation at the executed precision's peak (FP8 for an FP8 recipe)."""
    return share_of_peak(r)


def mfu_vs_bf16(r) -> float | None:
    """The same model TFLOP/s over the bf16 peak (how FP8 MFU is often quoted)."""
    g = catalog.find(r.device_name or "") if r.tflops else None
    try:
        peak = g.peak("bf16") if g else None
    except UserError:
        return None
    return r.tflops / r.gpus / peak if peak else None
