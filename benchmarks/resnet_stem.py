"""ResNet-50's stem at batch 256, bf16, channels-last, written several ways and timed alone (issue 23,
session 10). Session 9's profile of `resnet50-infer -v ...+cudnn-fused` had the 7x7 stride-2
convolution over 3 input channels as an Ampere `sm80_xmma_..._indexed` kernel at 1,711 us (35
TFLOP/s), cuDNN's input padding at 173 us and the 3x3 max pool at 838 us (0.6 TB/s): 31% of an
8,808 us step for 3% of the FLOPs. Each formulation below gives the same output (checked).

    PYTHONPATH=src python3 benchmarks/resnet_stem.py    # on the GPU: a table of us per formulation
    PYTHONPATH=src python3 benchmarks/resnet_stem.py --check    # on a CPU, small: every formulation matches
"""

from __future__ import annotations

import sys
import time

import torch
import torch.nn.functional as F

from gpuarena.workloads.convfuse import space_to_depth, space_to_depth_weight


def conv_relu(x, w, b):
    if x.is_cuda:
        return torch.cudnn_convolution_relu(x, w, b, (2, 2), (3, 3), (1, 1), 1)
    return F.relu(F.conv2d(x, w, b, 2, 3))


def pad_channels(t, c):
    """``t`` [n, 3, h, w] with zero channels up to ``c``, channels-last."""
    return F.pad(t, (0, 0, 0, 0, 0, c - t.shape[1])).contiguous(memory_format=torch.channels_last)


def s2d_conv_relu(s, w, b):
    if s.is_cuda:
        return torch.cudnn_convolution_relu(s, w, b, (1, 1), (0, 0), (1, 1), 1)
    return F.relu(F.conv2d(s, w, b))


def formulations(w, b):
    """name -> (prepare the input once, per-call function); the input preparation is timed too where
    a pipeline would pay it per batch (the ``+ pad`` rows)."""
    w4, w8 = pad_channels(w, 4), pad_channels(w, 8)
    ws = space_to_depth_weight(w, 16).contiguous(memory_format=torch.channels_last)
    pool = lambda y: F.max_pool2d(y, 3, 2, 1)      # noqa: E731
    cpool = torch.compile(pool, fullgraph=True)
    return {
        "conv 3 ch + relu (today)": lambda x: conv_relu(x, w, b),
        "conv 3 ch, then max pool (today's stem)": lambda x: pool(conv_relu(x, w, b)),
        "pad to 4 ch + conv": lambda x: conv_relu(pad_channels(x, 4), w4, b),
        "pad to 8 ch + conv": lambda x: conv_relu(pad_channels(x, 8), w8, b),
        "space-to-depth 16 ch + 4x4 conv": lambda x: s2d_conv_relu(space_to_depth(x, 16), ws, b),
        "conv 3 ch, then compiled max pool": lambda x: cpool(conv_relu(x, w, b)),
        "pad to 8 ch + conv, then compiled max pool": lambda x: cpool(conv_relu(pad_channels(x, 8), w8, b)),
        "space-to-depth + conv, then compiled max pool": lambda x: cpool(s2d_conv_relu(space_to_depth(x, 16), ws, b)),
    }


def bench(fn, x) -> float:
    """Median microseconds of one call (triton's do_bench on a GPU)."""
    if x.is_cuda:
        from triton.testing import do_bench

        return do_bench(lambda: fn(x), warmup=25, rep=200, return_mode="median") * 1e3
    t = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn(x)
        t.append(time.perf_counter() - t0)
    return sorted(t)[1] * 1e6


def main(check: bool) -> None:
    dev = "cpu" if check or not torch.cuda.is_available() else "cuda"
    dt = torch.bfloat16 if dev == "cuda" else torch.float32
    n = 2 if check else 256
    torch.backends.cudnn.benchmark = True
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(n, 3, 224, 224, device=dev, dtype=dt, generator=g).contiguous(memory_format=torch.channels_last)
    w = torch.randn(64, 3, 7, 7, device=dev, dtype=dt, generator=g) * 0.1
    w = w.contiguous(memory_format=torch.channels_last)
    b = torch.randn(64, device=dev, dtype=dt, generator=g) * 0.1
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name() if dev == 'cuda' else 'cpu'}, batch {n}")
    ref_conv = conv_relu(x, w, b).float()
    ref_pool = F.max_pool2d(ref_conv, 3, 2, 1)
    for name, fn in formulations(w, b).items():
        out = fn(x).float()
        ref = ref_pool if out.shape == ref_pool.shape else ref_conv
        err = ((out - ref).norm() / ref.norm()).item()
        us = bench(fn, x)
        print(f"  {name:<48} {us:8.1f} us  rel.err {err:.1e}", flush=True)
        if check:
            assert err < 1e-4, (name, err)


if __name__ == "__main__":
    main("--check" in sys.argv)
