"""CUDA paths: skipped without a GPU (conftest marks them).  The same code measured
the H200 figures in BENCHMARKS.md; these tests pin what a GPU run must store."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.gpu


def test_gpu_run_stores_telemetry_memory_and_ceiling(cli, tmp_path):
    db = str(tmp_path / "g.db")
    assert cli("run", "--db", db, "-q", "--device", "cuda", "-w", "matmul", "--set", "dtype=bf16",
               "--set", "m=2048", "--set", "n=2048", "--set", "k=2048", "--repeats", "5").returncode == 0
    proc = cli("run", "--db", db, "-q", "--device", "cuda", "-w", "resnet50-train",
               "--variant", "amp-bf16+channels-last", "--set", "batch_size=32", "--repeats", "5")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(cli("results", "--db", db, "-f", "json").stdout)
    mm, rn = rows
    assert mm["precision"] == "bf16" and mm["tflops"] > 1
    assert rn["status"] == "ok" and rn["device_name"].startswith("NVIDIA")
    assert rn["peak_memory_bytes"] > 0
    assert rn["power_w_mean"] > 0 and rn["energy_j_per_item"] > 0      # NVML present on a GPU box
    assert rn["throttled"] in (True, False)
    assert rn["extra"]["ceiling"]["result_id"] == mm["id"]             # share of the bf16 matmul ceiling
    assert 0 < rn["extra"]["share_of_ceiling"] < 1


def test_env_fingerprint_names_the_gpu(cli):
    env = json.loads(cli("env").stdout)
    assert env["gpu_count"] >= 1 and env["driver"] and env["gpus"][0]["power_limit_w"] > 0
