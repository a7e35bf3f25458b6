"""The spine end to end: spec -> runner -> workload -> measure -> store -> results,
through the real CLI, on the CPU at tiny sizes."""

from __future__ import annotations

import json
import sqlite3
import statistics

import pytest

REQUIRED_KEYS = {"run_id", "workload", "variant", "params", "status", "device_name", "throughput",
                 "peak_memory_bytes", "tflops", "power_w_mean", "energy_j_per_item", "throttled"}
THROUGHPUT_KEYS = {"median", "mean", "stdev", "cv", "ci95_low", "ci95_high", "unit", "n"}


@pytest.fixture(scope="module")
def resnet_run(smoke_run):
    """The session's smoke run: its two ResNet-50 cases are this file's subject."""
    return smoke_run


def test_run_stores_every_case_with_statistics(resnet_run, cli):
    db, proc = resnet_run
    out = cli("results", "--db", db, "--format", "json", "-w", "resnet50-train")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [r["variant"] for r in rows] == ["seed", "amp-bf16+channels-last"]
    for r in rows:
        assert REQUIRED_KEYS <= set(r)
        assert r["status"] == "ok"
        t = r["throughput"]
        assert THROUGHPUT_KEYS <= set(t)
        assert t["n"] == 2 and t["unit"] == "images/s"
        assert 0 < t["ci95_low"] < t["ci95_high"]
        assert len(r["samples"]) == 2
        # throughput is items per step over seconds per step, per repeat
        per_repeat = [r["params"]["batch_size"] / s for s in r["samples"]]
        assert t["median"] == pytest.approx(statistics.median(per_repeat))
        # achieved TFLOP/s comes from the documented FLOP count
        assert r["tflops"] == pytest.approx(t["median"] * 3 * 2 * 4.089e9 * (32 / 224) ** 2 / 1e12)
        # no NVML on this machine: telemetry is null, never invented
        assert r["power_w_mean"] is None and r["energy_j_per_item"] is None
        assert r["device_name"].startswith("CPU")
    assert rows[0]["precision"] == "default" and rows[1]["precision"] == "bf16"


def test_results_csv_and_table(resnet_run, cli):
    db, _ = resnet_run
    csv_out = cli("results", "--db", db, "--format", "csv", "-w", "resnet50-train")
    lines = csv_out.stdout.strip().splitlines()
    assert lines[0].startswith("id,run_id,source,workload,variant")
    assert len(lines) == 3
    table = cli("results", "--db", db, "-w", "resnet50-train")
    assert "resnet50-train" in table.stdout and "images/s" in table.stdout


def test_schema_is_versioned(resnet_run):
    db, _ = resnet_run
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] >= 1
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    run = con.execute("SELECT status, plan FROM runs").fetchone()
    stored = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert run[0] == "complete" and len(json.loads(run[1])) == stored


def test_default_run_on_cpu_is_the_smoke_suite(smoke_run, cli):
    """The README's main job with no arguments: smoke suite on the CPU, every workload ok."""
    db, _ = smoke_run
    rows = json.loads(cli("results", "--db", db, "-f", "json").stdout)
    from gpuarena.spec.suite import load_suite

    expected = {e.workload for e in load_suite("smoke").entries}
    assert {r["workload"] for r in rows} == expected
    assert all(r["status"] == "ok" for r in rows), [(r["workload"], r["error"]) for r in rows]
    assert all(r["throughput"]["median"] > 0 for r in rows)


def test_suite_cut_to_named_workloads(cli, tmp_path):
    """`--suite S -w W` runs S's entries for W only, with S's own parameters and method."""
    db = str(tmp_path / "cut.db")
    proc = cli("run", "--db", db, "-q", "--suite", "smoke", "-w", "membw", "-w", "d2h", "--repeats", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(cli("results", "--db", db, "-f", "json").stdout)
    assert sorted(r["workload"] for r in rows) == ["d2h", "membw"]
    assert all(r["status"] == "ok" and r["size"] == "tiny" for r in rows)


def test_list_and_env(cli):
    listing = json.loads(cli("list", "--format", "json").stdout)
    names = {w["name"] for w in listing["workloads"]}
    assert {"resnet50-train", "bert-large-infer", "bert-large-train", "sd15-generate", "matmul"} <= names
    resnet = next(w for w in listing["workloads"] if w["name"] == "resnet50-train")
    assert {"seed", "fp32", "tf32", "amp-bf16", "amp-fp16", "channels-last", "compile"} <= set(resnet["variants"])
    assert "smoke" in {s["name"] for s in listing["suites"]}
    env = json.loads(cli("env").stdout)
    assert env["cpu_count"] >= 1 and env["libraries"]["torch"] and len(env["hash"]) == 16


@pytest.mark.parametrize("argv, says", [
    (["run", "-w", "resnet50-trian"], "did you mean 'resnet50-train'"),
    (["run", "-w", "resnet50-train", "--set", "batch_size=-1"], "batch_size=-1: must be >= 1"),
    (["run", "-w", "resnet50-train", "--variant", "amp-bf16+amp-fp16"], "exclude each other"),
    (["run", "-w", "resnet50-train", "--variant", "seed+compile"], "does not combine"),
    (["run", "--suite", "no-such-suite"], "unknown suite"),
    (["run", "-w", "matmul", "--processes", "0"], "--processes 0: must be between 1 and 100"),
    (["run", "-w", "matmul", "--set", "processes=101"], "processes"),
])
def test_bad_input_is_one_line_exit_2(cli, tmp_path, argv, says):
    db = tmp_path / "x.db"
    proc = cli(*argv, "--db", str(db))
    assert proc.returncode == 2
    assert says in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not db.exists()


def test_malformed_suite_file(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nentries:\n  - workload: resnet50-train\n    grid: {batch_size: [1, 2]\n")
    proc = cli("run", "--suite", str(bad), "--db", str(tmp_path / "x.db"))
    assert proc.returncode == 2 and "not valid YAML" in proc.stderr


def test_run_ends_by_writing_the_report_beside_the_database(resnet_run):
    import os
    import re

    db, proc = resnet_run
    m = re.search(r"report: (\S+\.html)", proc.stdout + proc.stderr)
    assert m, proc.stderr[-1000:]
    path = m.group(1)
    assert os.path.dirname(path) == os.path.join(os.path.dirname(db), "reports")
    html = open(path).read()
    assert "resnet50-train" in html and "<svg" in html


def test_fused_sgd_and_cudnn_benchmark_run_and_say_so(cli, tmp_path, smoke_run):
    db = str(tmp_path / "f.db")
    p = cli("run", "--db", db, "-q", "-w", "resnet50-train", "--variant", "fused-sgd+cudnn-benchmark",
            "--set", "size=tiny", "--set", "batch_size=2", "--set", "loss=cross-entropy", "--repeats", "2")
    assert p.returncode == 0, p.stderr
    (fused,) = json.loads(cli("results", "--db", db, "--format", "json").stdout)
    assert fused["variant"] == "cudnn-benchmark+fused-sgd"    # stored in the canonical order
    assert fused["status"] == "ok" and fused["throughput"]["median"] > 0
    assert fused["extra"]["optimizer"] == "SGD fused" and fused["extra"]["cudnn_benchmark"] is True
    seed = json.loads(cli("results", "--db", smoke_run[0], "-f", "json", "-w", "resnet50-train").stdout)[0]
    assert seed["variant"] == "seed"
    assert seed["extra"]["optimizer"] == "SGD (PyTorch's default implementation)"
    assert seed["extra"]["cudnn_benchmark"] is False


def test_the_report_path_is_one_line_on_a_narrow_terminal(tmp_path):
    from tests.conftest import run_cli

    deep = tmp_path / ("a-folder-name-long-enough-to-wrap-" * 3) / "sub"
    deep.mkdir(parents=True)
    p = run_cli("run", "-q", "--db", str(deep / "g.db"), "-w", "matmul", "--set", "size=tiny", "--repeats", "2",
                env={"COLUMNS": "40"})
    assert p.returncode == 0, p.stderr
    line = next(x for x in (p.stdout + p.stderr).splitlines() if x.startswith("report:"))
    assert line == f"report: {deep / 'reports'}/" + line.rsplit("/", 1)[1] and line.endswith(".html")
