"""A case measured in several fresh processes (--processes): every window is kept, the
interval is over process means, and ratios take the process means as their samples."""

from __future__ import annotations

import json
import statistics

from gpuarena.analysis.rows.common import flags, per_repeat_throughput
from gpuarena.measure.stats import summarize
from gpuarena.measure.stats import warnings_for as stats_warnings_for
from gpuarena.report.html import write_report
from gpuarena.runner.pool import merge
from gpuarena.store.db import Store
from gpuarena.store.rows import validated


def test_three_processes_through_the_runner(cli, tmp_path):
    db = str(tmp_path / "p.db")
    proc = cli("run", "-q", "--db", db, "--device", "cpu", "-w", "matmul", "--set", "size=tiny",
               "--set", "dtype=fp32", "--repeats", "4", "--processes", "3")
    assert proc.returncode == 0, proc.stderr
    [r] = Store(db).results()
    assert r.status == "ok" and len(r.samples) == 12
    procs = r.extra.processes
    assert [p.repeats for p in procs] == [4, 4, 4]
    # the process means are the means of each process's own windows, in order
    items = r.items_per_step
    for i, p in enumerate(procs):
        windows = r.samples[4 * i:4 * i + 4]
        assert abs(p.throughput_mean - statistics.fmean(items / s for s in windows)) < 1e-6 * p.throughput_mean
    means = [p.throughput_mean for p in procs]
    between = summarize(means)
    assert r.throughput.n == 12
    assert abs(r.throughput.ci95_low - between.ci95_low) <= 1e-9 * abs(between.ci95_low) + 1e-9
    assert abs(r.throughput.ci95_high - between.ci95_high) <= 1e-9 * abs(between.ci95_high)
    assert r.throughput.median == statistics.median(items / s for s in r.samples)
    assert per_repeat_throughput(r) == means
    # the run's plan keeps the method, so a resumed run measures the same way
    [case] = Store(db).run(r.run_id)["plan"]
    assert case["processes"] == 3 and case["repeats"] == 4
    shown = json.loads(cli("results", "--db", db, "-f", "json").stdout)[0]
    assert len(shown["extra"]["processes"]) == 3
    # the report's method table says how the case was measured
    md = open(write_report(Store(db), str(tmp_path / "r.md"), fmt="md")).read()
    assert f"| {r.run_id} | matmul | 4 | " in md and " | 3 | tiny |" in md


def test_one_process_is_the_result_unchanged():
    r = {"status": "ok", "samples": [0.5, 0.5], "items_per_step": 1}
    assert merge([r]) is r


def _process(windows, **kw):
    xs = [1 / s for s in windows]
    s = summarize(xs)
    return {"status": "ok", "samples": windows, "items_per_step": 1, "flops_per_item": 2e12,
            "throughput": {**s.to_dict(), "unit": "items/s"},
            "warnings": stats_warnings_for(s) + ["GPU throttled during the timed window: power cap"],
            "extra": {"first_step_s": 1.0}, "power_w_mean": 100.0, "power_w_max": 120.0, "throttled": False,
            "peak_memory_bytes": 10, **kw}


def test_processes_that_disagree_are_flagged_and_widen_the_interval():
    a = _process([0.50, 0.51, 0.49, 0.50])
    b = _process([0.40, 0.41, 0.39, 0.40], power_w_mean=200.0, throttled=True, peak_memory_bytes=30)
    out = merge([a, b])
    assert out["extra"]["processes_disagree"] is True
    stored = validated({**out, "id": 1, "case_key": "k", "workload": "matmul", "variant": "seed", "params": {}})
    assert "process-dependent" in flags(stored) and "process-dependent" in flags(stored, brief=True)
    assert any(w.startswith("process-dependent: the 2 processes") for w in out["warnings"])
    # each process's own self-checks give way to the pooled ones; other warnings are kept once
    assert [w for w in out["warnings"] if w.startswith("only ")] == []
    assert out["warnings"].count("GPU throttled during the timed window: power cap") == 1
    assert out["power_w_mean"] == 150.0 and out["power_w_max"] == 120.0
    assert out["throttled"] is True and out["peak_memory_bytes"] == 30
    assert out["tflops"] == out["throughput_median"] * 2
    within = summarize([1 / s for s in a["samples"] + b["samples"]])
    assert out["throughput"]["ci95_high"] - out["throughput"]["ci95_low"] > within.ci95_high - within.ci95_low


def test_processes_that_agree_are_not_flagged():
    out = merge([_process([0.50, 0.51, 0.49, 0.50]), _process([0.505, 0.50, 0.495, 0.50])])
    assert out["extra"]["processes_disagree"] is False
    assert not any(w.startswith("process-dependent") for w in out["warnings"])


def test_a_failed_process_decides_the_result():
    bad = {"status": "oom", "error": "CUDA out of memory", "extra": {}}
    out = merge([_process([0.5, 0.5]), bad])
    assert out["status"] == "oom" and out["error"] == "process 2 of 2: CUDA out of memory"
