"""Options a command would ignore are refused with the reason (issue 27, items 9 and 10), and
numbers too small to mean anything (subnormal: 1/5e-324 is infinite) are refused before they
can print Infinity or NaN."""

from __future__ import annotations

import pytest

from tests.conftest import gpuarena
from tests.procs import one_line_error

CASES = [
    ("whatif-llm-busbw", ["whatif", "-w", "llm-train", "--gpu", "H100", "--busbw", "100"], "--busbw"),
    ("whatif-llm-many", ["whatif", "-w", "llm-train", "--gpu", "H100", "--overlap", "0.5", "--batch-size", "8",
                         "--throughput", "10", "--bucket-mb", "50"], "--overlap, --batch-size, --throughput"),
    ("whatif-llm-variant", ["whatif", "-w", "llm-train", "--gpu", "H100", "--variant", "zzz"], "zzz"),
    ("whatif-llm-mfu", ["whatif", "-w", "llm-train", "--gpu", "H100", "--mfu", "5e-324"], "--mfu"),
    ("whatif-ddp-tokens", ["whatif", "-w", "ddp-train", "--gpu", "H100", "--tokens", "1e9"], "--tokens"),
    ("whatif-subnormal", ["whatif", "-w", "ddp-train", "--gpu", "H100", "--busbw", "1e-320"], "--busbw"),
    ("check-judge", ["check", "-w", "llm-train", "--ratio", "abc", "--seq-len", "-5", "--gpus", "-3"],
     "--ratio, --seq-len, --gpus"),
    ("check-subnormal", ["check", "--gpu", "H100", "-w", "resnet50-train", "--precision", "bf16",
                         "--batch-size", "256", "--throughput", "5e-324"], "throughput"),
    ("advise-validate", ["advise", "--validate", "-w", "zzz", "--gpus", "5", "--set", "foo=bar",
                         "--prices", "/nonexistent"], "--workload, --gpus, --set, --prices"),
    ("cost-subnormal", ["cost", "--years", "1e-320"], "--years"),
    ("results-typo", ["results", "-w", "matmull"], "did you mean 'matmul'"),
]


@pytest.mark.parametrize("argv,says", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_refused_with_the_reason(tmp_path, db, argv, says):
    p = gpuarena(*argv, *(["--db", db] if argv[0] in ("results", "cost") else []), cwd=str(tmp_path))
    err = one_line_error(p, 2, says)
    assert "Infinity" not in p.stdout and "NaN" not in p.stdout and "internal error" not in err
