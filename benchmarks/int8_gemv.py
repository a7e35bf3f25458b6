"""Why llm-serve's int8 weight-only decode reads its weights at a quarter of the bf16 rate (issue 23,
session 9: the SwiGLU down projection over int8 took 72 us for 58.7 MB, 0.82 TB/s, where bf16 took
32 us for 117 MB): one-token matrix-vector products over int8 weights, written several ways, each
compiled by inductor with coordinate-descent tuning (as llm-serve's decode is) and timed alone.

    python3 benchmarks/int8_gemv.py            # on the GPU: a table of us and GB/s per formulation
    python3 benchmarks/int8_gemv.py --check    # on a CPU: every formulation gives the bf16 product
"""

from __future__ import annotations

import sys
import time

import torch
import torch.nn.functional as F

import torch._inductor.config as ic

ic.coordinate_descent_tuning = True
ic.triton.unique_kernel_names = True


def formulations():
    """name -> f(gate_up, weight, scales): SwiGLU of [1, 2K] then the down projection to [1, N]."""
    def act(gu):
        g, u = gu.chunk(2, dim=-1)
        return F.silu(g) * u

    return {
        "bf16 weights (reference)": lambda gu, w, s: F.linear(act(gu), w),
        "int8: F.linear(x, w.to(bf16)) * s (gpt-fast, llm-serve today)":
            lambda gu, q, s: F.linear(act(gu), q.to(gu.dtype)) * s,
        "int8: (x * w.to(bf16)).sum(-1) * s":
            lambda gu, q, s: (act(gu)[:, None, :] * q.to(gu.dtype)[None]).sum(-1) * s,
        "int8: fp32 multiply-sum":
            lambda gu, q, s: (act(gu).float()[:, None, :] * q.float()[None]).sum(-1).to(gu.dtype) * s,
        "int8, weight stored transposed [K, N]: reduce over rows":
            lambda gu, qt, s: (act(gu)[:, :, None] * qt.to(gu.dtype)[None]).sum(1) * s,
        "int8: activation realised first":
            lambda gu, q, s: F.linear(torch._foreach_add([act(gu)], 0)[0], q.to(gu.dtype)) * s,
    }


def bench(fn, args, reps: int = 200) -> float:
    """Median microseconds of one call (CUDA events through triton's do_bench on a GPU)."""
    if torch.cuda.is_available():
        from triton.testing import do_bench

        return do_bench(lambda: fn(*args), warmup=50, rep=200, return_mode="median") * 1e3
    t = []
    for _ in range(5):
        t0 = time.perf_counter()
        fn(*args)
        t.append(time.perf_counter() - t0)
    return sorted(t)[2] * 1e6


def main(check: bool) -> None:
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    dt = torch.bfloat16 if dev == "cuda" else torch.float32
    shapes = [(4096, 14336)] if not check else [(64, 96)]    # llama3-8b's down projection (N, K)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name() if dev == 'cuda' else 'cpu'}")
    for n, k in shapes:
        g = torch.Generator(device=dev).manual_seed(0)
        gu = torch.randn(1, 2 * k, device=dev, dtype=dt, generator=g)
        w = (torch.randn(n, k, device=dev, dtype=dt, generator=g) * 0.02)
        s = w.abs().amax(dim=1).float().clamp(min=1e-12) / 127
        q = torch.round(w.float() / s[:, None]).clamp(-127, 127).to(torch.int8)
        s = s.to(dt)
        want = None
        print(f"\ndown projection {n} x {k}: bf16 {n * k * 2 / 1e6:.1f} MB, int8 {n * k / 1e6:.1f} MB")
        for name, f in formulations().items():
            bf16 = name.startswith("bf16")
            args = (gu, w if bf16 else q.t().contiguous() if "transposed" in name else q, s)
            fn = torch.compile(f, fullgraph=True)
            t0 = time.perf_counter()
            out = fn(*args)
            comp = time.perf_counter() - t0
            if want is None:
                want = out.float()
            err = ((out.float() - want).norm() / want.norm()).item()
            us = bench(fn, args)
            nbytes = n * k * (2 if bf16 else 1) + 2 * k * gu.element_size()
            print(f"  {name:<62} {us:8.1f} us  {nbytes / us / 1e3:7.0f} GB/s  rel.err {err:.1e}  compile {comp:.0f} s",
                  flush=True)
            if check:
                assert err < 0.05, (name, err)


if __name__ == "__main__":
    main("--check" in sys.argv)
