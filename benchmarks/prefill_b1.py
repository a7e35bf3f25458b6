"""llama3-8b's batch-1 prefill of 512 tokens (bf16, fused projections), compiled as llm-serve
compiles it (engine.compile_prefill: fullgraph, the prompt length dynamic), timed and profiled: the
prefill's model FLOP/s and its costliest kernels with each one's share.  Then the same prefill
compiled with inductor's autotuned GEMM templates (``max_autotune_gemm``), if ``--autotune``, within
the time left (issue 23, session 12: the goal is 60% of the bf16 dense peak; session 11 measured 57.4%).

    PYTHONPATH=src python3 benchmarks/prefill_b1.py [--autotune] [--batch B]
"""

from __future__ import annotations

import sys
import time

import torch

from gpuarena.workloads.llm import engine
from gpuarena.workloads.llm.cache import StaticCache
from gpuarena.workloads.llm.flops import prefill_flops
from gpuarena.workloads.llm.model import build
from gpuarena.workloads.llm.shapes import SHAPES

PEAK = 989.4e12     # H200 SXM bf16 dense (data/gpus.csv)


def timed(prefill, tokens, cache, reps=20):
    for _ in range(3):
        prefill(tokens, cache)
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        prefill(tokens, cache)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    return sorted(times)[len(times) // 2]


def profile(prefill, tokens, cache, top=12):
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as prof_

    with prof_(activities=[ProfilerActivity.CUDA]) as p:
        prefill(tokens, cache)
        torch.cuda.synchronize()
    rows = {}
    for e in p.key_averages():
        if e.device_time_total > 0 and e.key not in ("", None):
            rows[e.key] = (e.device_time_total, e.count)
    total = sum(t for t, _ in rows.values())
    print(f"  kernels {total:,.0f} us in all")
    for k, (t, c) in sorted(rows.items(), key=lambda r: -r[1][0])[:top]:
        print(f"  {t:9,.0f} us {100 * t / total:5.1f}%  x{c:3d}  {k[:150]}")


def main():
    args = sys.argv[1:]
    batch = int(args[args.index("--batch") + 1]) if "--batch" in args else 1
    cfg = SHAPES["llama3-8b"]
    dev = torch.device("cuda")
    model = build(cfg, dev, torch.bfloat16).eval()
    engine.fuse_projections(model)
    engine.tune_inductor()
    cache = StaticCache(cfg, batch, 640, dev, torch.bfloat16)
    tokens = torch.randint(0, cfg.vocab_size, (batch, 512), device=dev)
    flops = prefill_flops(cfg, 512) * batch

    def eager(tokens, cache):
        return model(tokens, cache, last_only=True)

    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, batch {batch} x 512, "
          f"{flops / 1e12:.2f} TFLOP a prefill")
    recipes = [("compiled (llm-serve)", lambda: engine.compile_prefill(eager))]
    if "--autotune" in args:
        def autotuned():
            import torch._inductor.config as ic

            ic.max_autotune_gemm = True
            ic.max_autotune_gemm_backends = "ATEN,TRITON"
            return engine.compile_prefill(eager)
        recipes.append(("compiled, max_autotune_gemm (ATEN,TRITON)", autotuned))
    with torch.inference_mode():
        for label, make in recipes:
            torch._dynamo.reset()
            t0 = time.time()
            fn = make()
            fn(tokens, cache)
            torch.cuda.synchronize()
            t = timed(fn, tokens, cache)
            print(f"{label}: first call {time.time() - t0:.0f} s; {t * 1e3:.2f} ms, {flops / t / 1e12:.0f} TFLOP/s, "
                  f"{100 * flops / t / PEAK:.1f}% of {PEAK / 1e12:.1f}", flush=True)
            profile(fn, tokens, cache)


if __name__ == "__main__":
    main()
