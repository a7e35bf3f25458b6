"""Peer bandwidth per pair of GPUs of this host, in one process: a copy from GPU i to GPU j for every
ordered pair, timed with CUDA events (what CUDA's p2pBandwidthLatencyTest and nvbandwidth measure).
With peer access (NVLink, or PCIe peer-to-peer) the copy engine moves the bytes directly; without it
the driver stages them through host memory, and the pair says so.

Needs two or more CUDA GPUs; anywhere else the check is skipped with the reason (a CPU has no
peer copies to measure, and gloo's CPU collectives measure host memory, not a link)."""

from __future__ import annotations

import torch

SIZE = 256 << 20       # bytes per copy: large enough that the copy engine, not the launch, sets the time
WARMUP, REPEATS = 2, 5


def skipped(devices: list[str]) -> str | None:
    """Why there is no pair to measure, or None."""
    cuda = [d for d in devices if d.startswith("cuda")]
    if len(cuda) < 2:
        return (f"peer copies need two or more CUDA GPUs; this run has {len(cuda)}"
                + ("" if cuda else " (a CPU run)"))
    return None


def pair(src: int, dst: int, nbytes: int = SIZE) -> dict:
    """One direction of one pair: {src, dst, gbs, peer_access}."""
    a = torch.ones(nbytes, dtype=torch.uint8, device=f"cuda:{src}")
    b = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{dst}")
    stream = torch.cuda.current_stream(src)
    for _ in range(WARMUP):
        b.copy_(a)
    torch.cuda.synchronize(src)
    torch.cuda.synchronize(dst)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.device(src):
        start.record(stream)
        for _ in range(REPEATS):
            b.copy_(a)
        end.record(stream)
    end.synchronize()
    torch.cuda.synchronize(dst)
    seconds = start.elapsed_time(end) / 1e3
    return {"src": src, "dst": dst, "gbs": REPEATS * nbytes / seconds / 1e9,
            "peer_access": bool(torch.cuda.can_device_access_peer(src, dst))}


def measure(devices: list[str]) -> dict:
    """{"pairs": [...]} for every ordered pair of the devices, or {"skipped": why}."""
    why = skipped(devices)
    if why:
        return {"skipped": why}
    idx = sorted(int(d.split(":")[1]) for d in devices if d.startswith("cuda:"))
    return {"pairs": [pair(i, j) for i in idx for j in idx if i != j], "bytes_per_copy": SIZE}
