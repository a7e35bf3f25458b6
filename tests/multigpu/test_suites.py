"""The multi-GPU suites expand and put each 1-rank baseline before its N-rank cases."""

from __future__ import annotations

from gpuarena.spec.model import expand
from gpuarena.spec.suite import load_suite


def test_ddp_single_is_one_gpu_and_covers_every_ddp_variant():
    cases = expand(load_suite("ddp-single"), "cpu")
    ddp = [c for c in cases if c.workload == "ddp-train"]
    assert {c.gpus for c in cases} == {1}
    assert {c.params["model"] for c in ddp} == {"resnet50", "bert-large"}
    assert {c.variant for c in ddp} == {"seed", "static-graph", "fp16-compress", "bf16-compress", "no-sync"}
    assert {c.workload for c in cases} >= {"resnet50-train", "bert-large-train"}


def test_multi_gpu_sweeps_counts_and_sizes():
    cases = expand(load_suite("multi-gpu"), "cpu")
    ddp = [c for c in cases if c.workload == "ddp-train"]
    assert {c.gpus for c in ddp} == {1, 2, 4, 8}
    for c in ddp:   # the baseline of every N-rank case comes earlier in the run
        if c.gpus > 1:
            first = next(d for d in ddp if d.variant == c.variant and d.params == c.params)
            assert first.gpus == 1
    sizes = {c.params["size_mb"] for c in cases if c.workload == "allreduce"}
    assert min(sizes) * 2**20 == 1024 and max(sizes) * 2**20 >= 2**30
    assert {c.workload for c in cases} >= {"allreduce", "allgather", "reducescatter", "broadcast"}
