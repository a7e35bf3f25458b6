"""Are this GPU's GEMM results *right*?  Every result compared with a reference, element by element
(gpu-burn compares each result with the first; a silent data corruption passes a speed test).

The operands are small integers (-8..8) drawn from a fixed seed on the CPU.  Every product is an
integer of at most 64 and every partial sum an integer under 64 x k = 2^19 (k = 8192), so an FP32
accumulator holds each exactly whatever the order of the additions, split-K included; the result in
FP32/TF32 is the exact integer, and in BF16/FP16 the exact integer rounded once to the output type
(round to nearest even).  The reference is therefore exact and independent of the kernel:

- a second method computes it once per GPU and dtype: an FP64 GEMM of the same operands (FP64
  units, not the tensor cores' low-precision path), rounded to the output type;
- the CPU checks that reference on a few fixed rows (those rows' product on the host, exact in FP32).

Each GEMM under test is then compared bit for bit with the reference on the device (no host copy,
no synchronisation per GEMM); reduced-precision reductions are switched off for the check, since they
would round partial sums.  Any mismatch is a wrong result of that GPU.
"""

from __future__ import annotations

import contextlib
import functools

import torch

SEED = 20261204
LOW, HIGH = -8, 8          # operand integers: products <= 64, sums < 2^24 for k <= 2^18
CPU_ROWS = 4               # rows of the reference the CPU recomputes
DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


@contextlib.contextmanager
def exact_matmul(dtype: str):
    """TF32 on only for tf32; reduced-precision (FP16/BF16) reductions off; restored after."""
    m = torch.backends.cuda.matmul
    saved = (m.allow_tf32, m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction)
    m.allow_tf32 = dtype == "tf32"
    m.allow_fp16_reduced_precision_reduction = False
    m.allow_bf16_reduced_precision_reduction = False
    try:
        yield
    finally:
        m.allow_tf32, m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction = saved


@functools.lru_cache(maxsize=1)
def operands(n: int, seed: int = SEED) -> tuple[torch.Tensor, torch.Tensor]:
    """A and B (n x n, int8 on the CPU) from the fixed seed (drawn once per size: every dtype uses them)."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(LOW, HIGH + 1, (n, n), generator=g, dtype=torch.int8),
            torch.randint(LOW, HIGH + 1, (n, n), generator=g, dtype=torch.int8))


@functools.lru_cache(maxsize=1)
def host_rows(n: int, seed: int = SEED) -> tuple[torch.Tensor, torch.Tensor]:
    """(row indices, the exact product's rows) computed on the CPU, in FP32: exact too, every partial sum
    being an integer under 2^24."""
    a, b = operands(n, seed)
    rows = torch.linspace(0, n - 1, min(CPU_ROWS, n)).long()
    return rows, a[rows].float() @ b.float()


class GemmCheck:
    """One GPU, one dtype: ``run()`` a GEMM and compare it with the reference; ``result()`` the count."""

    def __init__(self, device, dtype: str = "bf16", n: int = 8192, seed: int = SEED):
        if dtype not in DTYPES:
            raise ValueError(f"dtype {dtype!r}: one of {', '.join(DTYPES)}")
        self.device, self.dtype, self.n = torch.device(device), dtype, n
        a, b = operands(n, seed)
        t = DTYPES[dtype]
        self.a, self.b = a.to(self.device, t), b.to(self.device, t)
        self.ref = (a.to(self.device, torch.float64) @ b.to(self.device, torch.float64)).to(t)
        rows, exact = host_rows(n, seed)
        host = exact.to(t)
        self.reference_ok = bool(torch.equal(host, self.ref[rows.to(self.device)].cpu()))
        self.results = 0
        self.bad_results = torch.zeros((), dtype=torch.int64, device=self.device)
        self.bad_elements = torch.zeros((), dtype=torch.int64, device=self.device)

    @property
    def flops(self) -> float:
        return 2.0 * self.n ** 3

    def run(self) -> None:
        with exact_matmul(self.dtype):
            c = torch.matmul(self.a, self.b)
        wrong = (c != self.ref).sum()
        self.bad_elements += wrong
        self.bad_results += (wrong > 0).long()
        self.results += 1

    def result(self) -> dict:
        """{dtype, n, results, bad_results, bad_elements, reference_ok, reference} (synchronises)."""
        out = str(self.ref.dtype).replace("torch.", "")
        return {"dtype": self.dtype, "n": self.n, "results": self.results,
                "bad_results": int(self.bad_results.item()), "bad_elements": int(self.bad_elements.item()),
                "reference_ok": self.reference_ok,
                "reference": f"exact: integer operands in [{LOW}, {HIGH}] (seed {SEED}), FP64 product on the "
                             f"device rounded to {out}, {min(CPU_ROWS, self.n)} rows recomputed on the CPU"}


def check(device, dtype: str, n: int, count: int) -> dict:
    """``count`` GEMMs of one dtype on one device, each compared with the reference."""
    g = GemmCheck(device, dtype, n)
    for _ in range(count):
        g.run()
    out = g.result()
    del g
    return out
