"""Doctor's acceptance checks beyond speed, per GPU of this host, in this process: GEMM results
checked against an exact reference (runner/gemm_check.py), a memory test over most of the free memory
(runner/memtest.py), the NVML error counters before and after and the XID events between
(measure/health.py), at ``burn-in`` level the sustained load (runner/burnin.py), and the peer
bandwidth of every pair of GPUs (runner/links.py).  Returns the evidence; analysis/verbs/acceptance.py
judges it.

Levels: ``quick`` (about 10 s per GPU on top of the speed checks) and ``burn-in`` (quick, then
``minutes`` of load on every GPU at once)."""

from __future__ import annotations

import torch

from gpuarena.measure import health as H
from gpuarena.runner import burnin, gemm_check, links, memtest

LEVELS = ("quick", "burn-in")
# GEMMs checked per dtype at quick level (8192^3 on a GPU: ~0.5 s of FP32, a few ms of BF16 each)
QUICK = {"fp32": 5, "tf32": 10, "bf16": 20, "fp16": 20}


def _uuid(device: str) -> str | None:
    if not device.startswith("cuda"):
        return None
    try:
        return "GPU-" + str(torch.cuda.get_device_properties(torch.device(device)).uuid)
    except Exception:
        return None


def _per_gpu(device: str) -> dict:
    n = 8192 if device.startswith("cuda") else 64
    out: dict = {"device": device, "uuid": _uuid(device), "counters_before": H.counters(torch.device(device))}
    try:
        out["gemm"] = [gemm_check.check(device, dt, n, k) for dt, k in QUICK.items()]
        if device.startswith("cuda"):
            torch.cuda.empty_cache()        # the GEMMs' blocks back to the driver: the memory test counts free memory
        out["memtest"] = memtest.memtest(device)
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"[:500]
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return out


def run(devices: list[str], level: str = "quick", minutes: float = 0.0) -> dict:
    """{"level", "gpus": {device: evidence}, "links": ..., "xid": ...} for the given devices."""
    if level not in LEVELS:
        raise ValueError(f"level {level!r}: one of {', '.join(LEVELS)}")
    with H.XidWatch() as xids:
        gpus = {d: _per_gpu(d) for d in devices}
        if level == "burn-in":
            for d, outcome in burnin.burn(devices, minutes * 60).items():
                gpus[d]["burn_in"] = outcome
        link = links.measure(devices)
        events = xids.drain()
        xid_note = xids.why
    for d, g in gpus.items():
        g["counters_after"] = H.counters(torch.device(d))
        g["counter_changes"] = H.changes(g["counters_before"], g["counters_after"])
        g["xid"] = [e["xid"] for e in events if g["uuid"] and e["uuid"] == g["uuid"]]
    return {"level": level, "minutes": minutes if level == "burn-in" else None, "gpus": gpus, "links": link,
            "xid_watch": xid_note or "XID critical-error events watched on every GPU during the checks"}
