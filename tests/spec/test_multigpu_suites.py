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


def test_set_with_commas_is_a_sweep_that_replaces_the_suites_axis():
    import pytest

    from gpuarena.errors import UserError
    from gpuarena.spec.suite import adhoc_suite, parse_sets

    params, _ = parse_sets(["size_mb=0.5, 4,1024", "dtype=float32"])
    assert params == {"size_mb": ["0.5", "4", "1024"], "dtype": "float32"}
    cases = expand(adhoc_suite(["allreduce"], [], gpus=[2, 4]), "cpu", None, params)
    assert [(c.gpus, c.params["size_mb"]) for c in cases] == [(2, 0.5), (2, 4.0), (2, 1024.0),
                                                              (4, 0.5), (4, 4.0), (4, 1024.0)]
    # a suite's axis gives way to the --set list
    from gpuarena.spec.suite import parse_suite

    suite = parse_suite("name: s\nentries:\n - {workload: allreduce, grid: {size_mb: [8, 16, 32]}, gpus: [2]}", "s")
    assert [c.params["size_mb"] for c in expand(suite, "cpu", None, {"size_mb": ["1", "2"]})] == [1.0, 2.0]
    with pytest.raises(UserError, match="an empty value"):
        parse_sets(["size_mb=1,,2"])
    with pytest.raises(UserError, match="size_mb"):
        expand(adhoc_suite(["allreduce"], []), "cpu", None, {"size_mb": ["1", "x"]})
