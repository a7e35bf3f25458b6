"""Where ResNet-50 inference at batch 256 spends its time on the GPU (issue 23: the goal is 30,000
images/s; session 8's fastest rung, cudnn-fused + cuda-graph, gave 28,634): the workload gpuarena
runs, built by its own class, stepped under the profiler, its costliest kernels and their share.

    python3 benchmarks/resnet_profile.py [VARIANT] [BATCH]     # on the GPU (about 30 s)
    python3 benchmarks/resnet_profile.py seed 2                 # on a CPU: a smoke check
The default variant is the fused model without the CUDA graph (the graph's replays hide its kernels
from some profilers; its kernels are the same).
"""

from __future__ import annotations

import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

from gpuarena.measure.profile import kernel_table
from gpuarena.workloads import registry
from gpuarena.workloads.base import StepContext


def main(variant: str, batch: int, steps: int = 10) -> None:
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    cls = registry.get("resnet50-infer")
    size = "full" if cuda else "tiny"
    params = cls.resolve_params({"batch_size": batch}, size)
    wl = cls(StepContext(device=dev, variants=cls.parse_variant(variant), params=params))
    wl.setup()
    for _ in range(10 if cuda else 1):
        wl.step()
    if cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        wl.step()
    if cuda:
        torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / steps
    acts = [ProfilerActivity.CUDA] if cuda else [ProfilerActivity.CPU]
    with profile(activities=acts) as prof:
        for _ in range(steps):
            wl.step()
        if cuda:
            torch.cuda.synchronize()
    table = kernel_table(prof, steps, top=14)
    per_img = cls.flops(params) if hasattr(cls, "flops") else None
    print(f"resnet50-infer {variant} batch {batch}: {wall * 1e3:.3f} ms a step, {batch / wall:,.0f} images/s; "
          f"kernels {table.get('kernel_us_per_step', 0):,.0f} us a step")
    if per_img:
        print(f"model FLOPs {per_img / 1e9:.2f} GFLOP an image: {per_img * batch / wall / 1e12:,.0f} TFLOP/s")
    for k in table.get("kernels", []):
        print(f"  {k['us_per_step']:9.1f} us  {k['share']:6.1%}  x{k['calls_per_step']:<5g} {k['kernel'][:110]}")


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0] if a else "bf16+channels-last+cudnn-benchmark+cudnn-fused", int(a[1]) if len(a) > 1 else 256)
