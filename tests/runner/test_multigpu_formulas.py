"""Known answers: nccl-tests' bus bandwidth, the scaling efficiency, combining ranks, torchrun's argv."""

from __future__ import annotations

import sys

import pytest

from gpuarena.analysis.rows.scaling import efficiency, find_baseline, scaling_figures
from gpuarena.errors import UserError
from gpuarena.runner import torchrun
from gpuarena.runner.rank import combine
from gpuarena.spec.model import Case
from gpuarena.store.rows import validated
from gpuarena.workloads import registry
from gpuarena.workloads.collectives.spec import bandwidths, bus_factor
from gpuarena.workloads.ddp.spec import overlap_fraction


def test_bus_factor_matches_nccl_tests():
    # nccl-tests doc/PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather/reduce-scatter (n-1)/n, broadcast 1.
    assert bus_factor("allreduce", 8) == 2 * 7 / 8 == 1.75
    assert bus_factor("allreduce", 2) == 1.0
    assert bus_factor("allreduce", 1) == 0.0
    assert bus_factor("allgather", 4) == 0.75
    assert bus_factor("reducescatter", 8) == 0.875
    assert bus_factor("broadcast", 8) == 1.0
    with pytest.raises(ValueError):
        bus_factor("alltoall", 8)


def test_bandwidths_known_answer():
    # 1 GiB all-reduced in 10 ms on 8 ranks: algbw 107.374 GB/s, busbw x 1.75.
    algbw, busbw = bandwidths(2**30, 0.010, "allreduce", 8)
    assert algbw == pytest.approx(107.3741824)
    assert busbw == pytest.approx(107.3741824 * 1.75)


def test_efficiency_known_answer():
    # Article 000: 4 A100s at 0.92 of linear -> 4 x 1000 x 0.92 images/s.
    assert efficiency(3680.0, 4, 1000.0) == pytest.approx(0.92)
    assert efficiency(3240.0, 4, 1000.0) == pytest.approx(0.81)
    with pytest.raises(ValueError):
        efficiency(1.0, 0, 1.0)


def _result(gpus, thr, samples, **kw):
    r = {"id": gpus, "status": "ok", "workload": "ddp-train", "variant": "seed", "params": {"model": "resnet50"},
         "size": "full", "gpus": gpus, "throughput_median": thr, "items_per_step": 256.0 * gpus,
         "samples": samples, "extra": {"world_size": gpus}}
    r.update(kw)
    return validated({**r, "case_key": f"k{gpus}"})


def test_scaling_figures_against_baseline():
    one = _result(1, 1000.0, [0.256, 0.256, 0.256])
    four = _result(4, 3680.0, [1024 / 3680] * 3)
    other = _result(1, 500.0, [0.512] * 3, params={"model": "bert-large"})
    assert find_baseline([one, other, four], four) is one
    fig = scaling_figures(four, one)
    assert fig["scaling_efficiency"] == pytest.approx(0.92)
    assert fig["scaling_n"] == 4
    low, high = fig["scaling_efficiency_ci95"]
    assert low == pytest.approx(0.92) and high == pytest.approx(0.92)   # no spread, no width
    assert find_baseline([other], four) is None


def test_combine_sums_data_parallel_and_takes_slowest_collective():
    def rank(samples, items):
        return {"status": "ok", "unit": "x/s", "samples": samples, "items_per_step": items,
                "throughput_median": items / samples[0], "flops_per_item": 2e9, "warnings": [],
                "extra": {"result_check": "passed", "size_bytes": 1e9}}

    ranks = [rank([0.5, 0.5, 0.5], 10.0), rank([0.25, 0.25, 0.25], 10.0)]
    ddp = combine(ranks, 2, registry.runnable("ddp-train"))
    assert ddp["throughput_median"] == pytest.approx(20 + 40)          # 10/0.5 + 10/0.25
    assert ddp["samples"] == [0.5, 0.5, 0.5]                           # the slowest rank's step
    assert ddp["extra"]["per_gpu_throughput"] == pytest.approx(30)
    assert ddp["tflops"] == pytest.approx(60 * 2e9 / 1e12)
    coll = combine(ranks, 2, registry.runnable("allreduce"))
    assert coll["throughput_median"] == pytest.approx(20)              # the slowest rank: 10 / 0.5
    assert coll["extra"]["time_per_call_s"] == 0.5
    assert coll["extra"]["algbw_gbs"] == pytest.approx(2.0)            # 1e9 B / 0.5 s
    assert coll["extra"]["busbw_gbs"] == pytest.approx(2.0 * 2 * 1 / 2)
    ranks[1] = {"status": "oom", "error": "CUDA out of memory", "extra": {}}
    bad = combine(ranks, 2, registry.runnable("ddp-train"))
    assert bad["status"] == "oom" and bad["error"] == "rank 1: CUDA out of memory"
    assert bad["extra"]["failed_ranks"] == [1]


def test_combine_energy_is_every_rank_or_none_and_names_each_source():
    """Energy per item is over every rank's items; a rank with none leaves the job with none, not rank 0's
    alone; ranks whose windows took different sources (measure/energy.py) say both."""
    def rank(energy, source):
        return {"status": "ok", "unit": "x/s", "samples": [0.5, 0.5], "items_per_step": 10.0,
                "throughput_median": 20.0, "warnings": [], "extra": {}, "power_w_mean": 600.0,
                "energy_j_per_item": energy, "energy_source": source}

    both = combine([rank(30.0, "nvml_energy_counter"), rank(20.0, "mean_power_x_time")], 2,
                   registry.runnable("ddp-train"))
    assert both["energy_j_per_item"] == pytest.approx(25.0)
    assert both["energy_source"] == "mean_power_x_time+nvml_energy_counter"
    one = combine([rank(30.0, "nvml_energy_counter"), rank(None, None)], 2, registry.runnable("ddp-train"))
    assert one["energy_j_per_item"] is None and one["energy_source"] is None


def test_overlap_fraction():
    assert overlap_fraction(0.01, 0.04) == pytest.approx(0.75)
    assert overlap_fraction(0.05, 0.04) == 0.0
    assert overlap_fraction(0.01, 0.0) is None


def test_torchrun_command_and_pass_through(monkeypatch):
    case = Case(workload="allreduce", variant="seed", params={}, repeats=1, warmup=0, steps=1,
                timeout_s=60, gpus=4)
    monkeypatch.setenv(torchrun.ARGS_ENV, "")   # undone after the test, with what export_args sets
    cmd = torchrun.command(case, "c.json", "r.json")
    assert cmd[:5] == [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "4"]
    assert "--standalone" in cmd and cmd[-4:] == ["-m", "gpuarena.runner.rank", "c.json", "r.json"]
    torchrun.export_args(["--nnodes=2", "--rdzv-endpoint head:29500", "--rdzv-backend=c10d", "--node-rank 1"])
    cmd = torchrun.command(case, "c.json", "r.json")
    assert "--standalone" not in cmd
    assert cmd[5:11] == ["--nnodes=2", "--rdzv-endpoint", "head:29500", "--rdzv-backend=c10d", "--node-rank", "1"]
    assert torchrun.multi_node(torchrun.pass_through())
    with pytest.raises(UserError, match="only rendezvous options"):
        torchrun.parse_args(["--nproc_per_node=8"])
    with pytest.raises(UserError, match="needs a value"):
        torchrun.parse_args(["--nnodes"])


def test_fit_to_host_keeps_cpu_counts():
    cases = [Case(workload="allreduce", variant="seed", params={}, repeats=1, warmup=0, steps=1,
                  timeout_s=60, gpus=n) for n in (1, 8)]
    kept, notes = torchrun.fit_to_host(cases, "cpu")
    assert kept == cases and notes == []


def test_bad_inner_variant_is_refused_before_running():
    ddp = registry.get("ddp-train")
    assert ddp.resolve_params({"model_variant": "channels-last+amp-bf16"})["model_variant"] == "amp-bf16+channels-last"
    with pytest.raises(UserError, match="no variant"):
        ddp.resolve_params({"model_variant": "amp-bf17"})


def test_ddp_train_reports_its_inner_workloads_unit():
    from gpuarena.workloads import registry

    ddp = registry.get("ddp-train")
    assert ddp.unit_name({"model": "resnet50"}) == "images/s"
    assert ddp.unit_name({"model": "bert-large"}) == "sequences/s"
