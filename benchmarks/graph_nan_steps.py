"""The CUDA-graph rung as the runner drives it (setup, then steps; accuracy reference on), the output's
finiteness checked after every step: at which step a batch-256 replay's output turns non-finite, and
whether an eager forward of the same model on the same input is finite then (session 10, issue 23).

    python3 benchmarks/graph_nan_steps.py [BATCH] [STEPS]     # on the GPU
"""

from __future__ import annotations

import sys

import torch

from gpuarena.workloads import registry
from gpuarena.workloads.base import StepContext


def main(batch: int, steps: int) -> None:
    cls = registry.get("resnet50-infer")
    for variant, stem in (("bf16+channels-last+cudnn-benchmark+cudnn-fused+cuda-graph", "plain"),
                          ("bf16+channels-last+cudnn-fused+cuda-graph", "plain")):
        params = cls.resolve_params({"batch_size": batch, "stem": stem}, "full")
        wl = cls(StepContext(device=torch.device("cuda"), variants=cls.parse_variant(variant), params=params))
        wl.setup()
        bad = []
        for i in range(steps):
            wl.step()
            if not torch.isfinite(wl.out).all():
                bad.append(i)
        print(f"{variant} stem={stem} batch {batch}: {len(bad)} of {steps} steps non-finite; first {bad[:8]}",
              flush=True)
        del wl
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 256, int(sys.argv[2]) if len(sys.argv) > 2 else 60)
