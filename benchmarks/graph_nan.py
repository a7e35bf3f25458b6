"""Why `resnet50-infer -v bf16+channels-last+cudnn-benchmark+cudnn-fused+cuda-graph` at batch 256 stores
an output with NaN/inf (session 8's 28,634 images/s and session 10's 40,615 are flagged so; batch 1 is
finite): the fused model captured as deploy.GraphedModel captures it, replayed, against the same model
eager on the same input. When a replay is not finite, a second capture holds every leaf module's
output (hooks) and the first one that is not finite after its replay is named.

    python3 benchmarks/graph_nan.py     # on the GPU (about a minute)
"""

from __future__ import annotations

import torch

from gpuarena.workloads import deploy, registry
from gpuarena.workloads.base import StepContext


def build(batch: int, variant: str, stem: str):
    cls = registry.get("resnet50-infer")
    params = cls.resolve_params({"batch_size": batch, "stem": stem}, "full")
    wl = cls(StepContext(device=torch.device("cuda"), variants=cls.parse_variant(variant), params=params))
    wl.measure_accuracy = False
    wl.setup()
    return wl.model, wl.x


@torch.inference_mode()
def main() -> None:
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}")
    for batch, variant, stem in [(256, "bf16+channels-last+cudnn-benchmark+cudnn-fused", "plain"),
                                 (256, "bf16+channels-last+cudnn-fused", "plain"),
                                 (64, "bf16+channels-last+cudnn-benchmark+cudnn-fused", "plain"),
                                 (256, "bf16+channels-last+cudnn-benchmark+cudnn-fused", "s2d")]:
        model, x = build(batch, variant, stem)
        eager = model(x).float()
        g = deploy.GraphedModel(model, x)
        replayed = [g(x).float().clone() for _ in range(2)]
        bad = [int((~torch.isfinite(r)).sum()) for r in replayed]
        diff = [float((r - eager).abs().max()) if b == 0 else None for r, b in zip(replayed, bad)]
        print(f"batch {batch} {variant} stem={stem}: eager finite {bool(torch.isfinite(eager).all())}; "
              f"replays non-finite {bad}, max |replay - eager| {diff}", flush=True)
        if any(bad):
            names = []
            hooks = [m.register_forward_hook(lambda mod, i, o, n=n, keep=names: keep.append((n, o)))
                     for n, m in model.named_modules() if not list(m.children())]
            g2 = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g2):
                model(x)
            for h in hooks:
                h.remove()
            g2.replay()
            torch.cuda.synchronize()
            first = next(((n, int((~torch.isfinite(o)).sum()), tuple(o.shape)) for n, o in names
                          if not torch.isfinite(o).all()), None)
            print(f"    first non-finite module output in a second capture: {first} of {len(names)}", flush=True)
        del model, g
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
