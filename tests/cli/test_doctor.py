"""`gpuarena doctor` on the CPU: the whole suite at tiny sizes through the real runner, a verdict,
the results stored (so `fleet` can read them), and a bad --device refused with one line."""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_doctor_runs_on_the_cpu_at_tiny_sizes(cli, tmp_path):
    db = str(tmp_path / "doc.db")
    out = cli("doctor", "--db", db, "--format", "json", "-q")
    assert out.returncode == 0, out.stderr
    v = json.loads(out.stdout)
    (gpu,) = v["gpus"]
    assert gpu["device"] == "cpu" and v["tiny"] and not v["links"]
    checks = {c["check"]: c for c in gpu["checks"]}
    assert set(checks) == {"matmul fp32", "matmul tf32", "matmul bf16", "matmul fp16", "membw", "h2d pinned",
                           "d2h pinned", "resnet50-train amp-bf16+channels-last"}
    assert all(c["status"] == "ok" and c["value"] > 0 for c in checks.values())
    assert gpu["verdict"] == "OK"
    stored = json.loads(cli("results", "--db", db, "--format", "json").stdout)
    assert len(stored) == 8 and {r["size"] for r in stored} == {"tiny"}
    # tiny on the CPU means every size at its tiny value, the suite's ResNet-50 batch of 64 too
    (resnet,) = [r for r in stored if r["workload"] == "resnet50-train"]
    assert resnet["params"]["batch_size"] == 2 and resnet["params"]["loss"] == "cross-entropy"
    fleet = cli("fleet", "--db", db, "--suite", "doctor")
    assert fleet.returncode == 0 and "1 host(s)" in fleet.stdout


def test_doctor_refuses_a_bad_device(cli, tmp_path):
    out = cli("doctor", "--db", str(tmp_path / "d.db"), "--device", "tpu")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "d.db").exists()
