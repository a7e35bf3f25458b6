"""Timing one window of steps.

On CUDA: events recorded on the current stream around the window (triton's
do_bench habit), so host-side jitter is not counted and the queue is drained
before the clock stops.  Elsewhere: a host clock with a synchronisation at both
ends (for the CPU the work is synchronous anyway).
"""

from __future__ import annotations

import time
from typing import Callable


class WindowTimer:
    def __init__(self, device):
        import torch

        self.torch = torch
        self.cuda = getattr(device, "type", str(device)) == "cuda"

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()

    def time(self, fn: Callable[[], None], steps: int) -> float:
        """Seconds for ``steps`` calls of fn, measured on the device."""
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(steps):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
        self.sync()
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()
        self.sync()
        return time.perf_counter() - t0
