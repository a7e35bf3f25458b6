"""Reading the PyTorch profiler: communication time, exposed communication, kernel tables.

The workloads run the profiler around a few steps after timing (never inside a timed
window); what a profile says is worked out here:

- ``comm_seconds``: communication in a profile, NCCL kernels on the GPU, gloo operations on
  the CPU (ddp-train, llm-train);
- ``comm_timeline``: communication intervals against compute intervals; the part of the
  communication during which no compute runs is the exposed share (llm-train: FSDP2 has no
  ``no_sync()`` that leaves the rest of the step unchanged -- its all-gathers are the forward
  pass's inputs -- so ddp-train's no-sync window against a normal one does not carry over);
- ``kernel_table``: the costliest kernels of some steps with their share of the kernel time
  (llm-serve's decode profile).
"""

from __future__ import annotations

STEP_LABEL = "gpuarena.llm_step"   # a record_function around each profiled step
_COMM = ("nccl", "gloo", "c10d", "record_param_comms", "wait")


def _on_gpu(event) -> bool:
    import torch    # only a profile's reader needs it: a profile exists, so torch is loaded

    return event.device_type == torch.autograd.DeviceType.CUDA


def comm_seconds(prof, cuda: bool) -> float:
    """Seconds of communication in a profile: NCCL kernels on the GPU, gloo ops on the CPU.

    gloo's operations run on its own threads as top-level events ("gloo:all_reduce",
    "gloo:broadcast"); NCCL's are device kernels ("ncclDevKernel_AllReduce...").
    """
    total_us = 0.0
    for e in prof.events():
        name = e.name.lower()
        if cuda:
            if "nccl" in name and _on_gpu(e):
                total_us += e.device_time_total
        elif name.startswith("gloo:"):
            total_us += e.cpu_time_total
    return total_us / 1e6


def union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Sorted disjoint intervals covering the same points."""
    out: list[list[float]] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def length(intervals) -> float:
    return sum(b - a for a, b in intervals)


def overlap(xs, ys) -> float:
    """Total length of the intersection of two sorted disjoint interval lists."""
    i = j = 0
    total = 0.0
    while i < len(xs) and j < len(ys):
        lo, hi = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        total += max(0.0, hi - lo)
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return total


def comm_timeline(prof, cuda: bool) -> tuple[float, float]:
    """(communication seconds, exposed communication seconds) over a profile whose steps ran
    under record_function(STEP_LABEL); on the CPU that label names the training thread."""
    events = prof.events()
    compute_thread = next((e.thread for e in events if e.name == STEP_LABEL), None)
    comm, compute = [], []
    for e in events:
        name = e.name.lower()
        span = (e.time_range.start, e.time_range.end)
        if cuda:
            if not _on_gpu(e):
                continue
            (comm if "nccl" in name else compute).append(span)
        elif name.startswith("gloo:"):
            comm.append(span)
        elif name.startswith("aten::") and e.thread == compute_thread and not any(c in name for c in _COMM):
            compute.append(span)
    comm_u, compute_u = union(comm), union(compute)
    total = length(comm_u)
    return total / 1e6, (total - overlap(comm_u, compute_u)) / 1e6


def kernel_table(prof, steps: int, top: int = 8) -> dict:
    """The ``top`` costliest kernels of a profile of ``steps`` steps: share of the kernel time,
    microseconds and calls per step, and the kernel time itself (what the launch gaps are not)."""
    rows = []
    for e in prof.key_averages():
        t = getattr(e, "self_device_time_total", None)
        if t is None:
            t = getattr(e, "self_cuda_time_total", 0)
        if t and t > 0:
            rows.append((e.key, float(t), int(e.count)))
    total = sum(t for _, t, _ in rows)
    rows.sort(key=lambda r: -r[1])
    per = max(steps, 1)
    return {"steps": steps, "kernel_us_per_step": total / per,
            "kernels": [{"kernel": k[:120], "share": t / total, "us_per_step": t / per,
                         "calls_per_step": c / per} for k, t, c in rows[:top]] if total else []}
