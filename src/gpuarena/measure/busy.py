"""Is the GPU already busy?  Another process's kernels would share the SMs and
skew every figure, so the run refuses to start unless --allow-busy is given."""

from __future__ import annotations

import os

from gpuarena.measure.telemetry import nvml_handle


def busy_processes(device: str) -> list[dict]:
    """Compute processes on the GPU other than ourselves (empty without NVML)."""
    import torch

    if not torch.cuda.is_available():
        return []
    nv, h = nvml_handle(torch.device(device))
    if h is None:
        return []
    procs = []
    for getter in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        try:
            for p in getattr(nv, getter)(h):
                if p.pid != os.getpid():
                    procs.append({"pid": p.pid, "used_bytes": getattr(p, "usedGpuMemory", None)})
        except Exception:
            continue
    return procs


def busy_message(device: str) -> str | None:
    procs = busy_processes(device)
    if not procs:
        return None
    pids = ", ".join(str(p["pid"]) for p in procs[:5])
    return f"{device} is busy: {len(procs)} other process(es) use it (pid {pids})"
