"""llama3-8b's one-token products on the GPU, four ways (issue 23, session 12): inductor's own
reduction with the input's producer fused (what llm-serve's bf16 decode runs), inductor's with the
input realised first (int8's and FP8's), gpuarena's Triton kernel (workloads/llm/gemv.py) behind the
producer, that kernel with the RMSNorm folded in (session 13, llm-serve version 9), and the kernel alone
over a sweep of its tile configurations.

Every case runs inside one CUDA graph over enough copies of the weights (>= 512 MB) that none is
still in the 50 MB L2 cache when it is read again, as in a decode step.  Prints one line per case:
microseconds a call and the weights' GB/s.

    PYTHONPATH=src python3 benchmarks/gemv.py [--quick] [--only wqkv,wo] [--tiles 1,1024,4,3/2,1024,4,1]
"""

from __future__ import annotations

import itertools
import math
import sys
import time

import torch
import torch.nn.functional as F

from gpuarena.workloads.llm import engine, gemv
from gpuarena.workloads.llm.weight_only import per_row_fp8, realised

SHAPES = {"wqkv": (6144, 4096), "wo": (4096, 4096), "w13": (28672, 4096), "w2": (4096, 14336),
          "output": (128256, 4096)}


def graph_us(launch, copies: int) -> float:
    """Microseconds a call of ``launch(i)`` (i: which weight copy), replayed in a CUDA graph."""
    calls = max(copies, 48 // copies * copies)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(copies):
            launch(i)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(calls):
            launch(i % copies)
    times = []
    for _ in range(12):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / calls)
    return sorted(times)[len(times) // 2]


def producer(kind: str, dim: int):
    if kind == "swiglu":
        return lambda src, nw: F.silu(src[:dim]) * src[dim:]
    return lambda src, nw: ((src.float() * torch.rsqrt(src.float().pow(2).mean(-1, keepdim=True) + 1e-5))
                            .to(src.dtype) * nw)


def main(args: list[str]) -> None:
    engine.tune_inductor()
    configs = [c for c in itertools.product((1, 2, 4, 8), (256, 512, 1024, 2048), (4, 8), (1, 3))
               if c[0] * c[1] <= 8192]
    if "--quick" in args:
        configs = configs[:4]
    if "--tiles" in args:
        configs = [tuple(int(v) for v in c.split(",")) for c in args[args.index("--tiles") + 1].split("/")]
    only = args[args.index("--only") + 1].split(",") if "--only" in args else list(SHAPES)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {len(configs)} tile configurations")
    for name, (n, k) in SHAPES.items():
        for wdt in ("bf16", "fp8"):
            if name in only:
                case(name, n, k, wdt, configs)


def case(name: str, n: int, k: int, wdt: str, configs) -> None:
    dev, bf = torch.device("cuda"), torch.bfloat16
    base = torch.randn(n, k, device=dev, dtype=bf) * 0.02
    w0, s = (base, None) if wdt == "bf16" else per_row_fp8(base)
    s = s.reshape(-1).contiguous() if s is not None else None
    del base
    nbytes = w0.numel() * w0.element_size()
    copies = max(1, math.ceil(512e6 / nbytes))
    ws = [w0] + [w0.clone() for _ in range(copies - 1)]
    kind = "swiglu" if name == "w2" else "rmsnorm"
    src = torch.randn(2 * k if kind == "swiglu" else k, device=dev, dtype=bf)
    nw = torch.ones(k, device=dev, dtype=bf)
    prod = producer(kind, k)
    sc = s.to(bf) if s is not None else None

    def fused(src, w, nw):
        y = F.linear(prod(src, nw)[None], w.to(bf))
        return y * sc if sc is not None else y

    def real(src, w, nw):
        y = F.linear(realised(prod(src, nw))[None], w.to(bf))
        return y * sc if sc is not None else y

    def kern(src, w, nw):
        return gemv.matvec(prod(src, nw)[None], w, s)

    def folded(src, w, nw):
        return gemv.matvec(src[None], w, s, nw, 1e-5)

    x = prod(src, nw).contiguous()
    ref = gemv.reference(x, w0, s).float()
    out = {}
    ways = [("inductor, producer fused", fused), ("inductor, input realised", real),
            ("triton kernel after the producer", kern)] + ([("triton kernel, the norm folded in", folded)]
                                                           if kind == "rmsnorm" else [])
    for label, fn in ways:
        torch._dynamo.reset()
        c = torch.compile(fn, fullgraph=True)
        got = c(src, w0, nw).reshape(-1).float()
        err = ((got - ref).norm() / ref.norm()).item()
        out[label] = (graph_us(lambda i, c=c: c(src, ws[i], nw), copies), err)
    y = torch.empty(n, device=dev, dtype=bf)
    best = None
    t0 = time.time()
    for cfg in configs:
        us = graph_us(lambda i, cfg=cfg: gemv.launch(x, ws[i], s, y, cfg), copies)
        if best is None or us < best[0]:
            best = (us, cfg)
    default = gemv.config(n, k, w0.element_size())
    out[f"kernel alone, default {default}"] = (graph_us(lambda i: gemv.launch(x, ws[i], s, y), copies), 0.0)
    out[f"kernel alone, best {best[1]}"] = (best[0], 0.0)
    for label, (us, err) in out.items():
        print(f"{name:6s} {n:6d}x{k:5d} {wdt:4s} {label:48s} {us:8.2f} us {nbytes / us / 1e3:7.0f} GB/s"
              + (f"  rel.err {err:.1e}" if err else ""), flush=True)
    print(f"    (sweep {time.time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
