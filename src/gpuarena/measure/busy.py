"""Is the GPU already busy?  Another process's kernels would share the SMs and
skew every figure, so the run refuses to start unless --allow-busy is given.

Only CUDA devices are checked (NVML's process list); a CPU run is never
refused, since there is no device-wide list of "other users" of a CPU to read.
The decision itself (`others` and `message`) is a pure function over a process
list, so it is tested without a GPU.
"""

from __future__ import annotations

import os

from gpuarena.measure.telemetry import nvml_handle


def others(procs: list[dict], own_pids: set[int]) -> list[dict]:
    """The processes on the device that are not us, each pid once."""
    seen, out = set(), []
    for p in procs:
        pid = p.get("pid")
        if pid is None or pid in own_pids or pid in seen:
            continue
        seen.add(pid)
        out.append(p)
    return out


def message(device: str, procs: list[dict], own_pids: set[int]) -> str | None:
    """The line telling the user the device is busy, or None when it is free."""
    busy = others(procs, own_pids)
    if not busy:
        return None
    pids = ", ".join(str(p["pid"]) for p in busy[:5]) + (", ..." if len(busy) > 5 else "")
    used = [p["used_bytes"] for p in busy if isinstance(p.get("used_bytes"), int)]
    mem = f", {sum(used) / 2**30:.1f} GiB in use" if used else ""
    return f"{device} is busy: {len(busy)} other process(es) use it (pid {pids}{mem})"


def device_processes(device: str) -> list[dict]:
    """Compute and graphics processes NVML lists on the device (empty without CUDA or NVML)."""
    import torch

    if not device.startswith("cuda") or not torch.cuda.is_available():
        return []
    nv, h = nvml_handle(torch.device(device))
    if h is None:
        return []
    procs = []
    for getter in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        try:
            for p in getattr(nv, getter)(h):
                procs.append({"pid": p.pid, "used_bytes": getattr(p, "usedGpuMemory", None)})
        except Exception:
            continue
    return procs


def busy_processes(device: str) -> list[dict]:
    """Processes on the GPU other than ourselves."""
    return others(device_processes(device), {os.getpid()})


def busy_message(device: str) -> str | None:
    return message(device, device_processes(device), {os.getpid()})
