"""`gpuarena doctor` on the CPU: the whole suite at tiny sizes through the real runner, the acceptance
checks, a verdict and its exit code, the results stored and an evidence bundle written (so `fleet` can
read them), a patched GEMM kernel caught as wrong with the device named, a short burn-in, and usage
errors refused with one line and exit code 2."""

from __future__ import annotations

import json
import signal

import psutil
import pytest
import torch

from tests.procs import case_children, count, start_runner, wait_for
from gpuarena.store import bundle as B
from gpuarena.store.db import Store


@pytest.mark.slow
def test_doctor_runs_on_the_cpu_at_tiny_sizes(cli, tmp_path):
    db, bundle = str(tmp_path / "doc.db"), str(tmp_path / "doc.json")
    out = cli("doctor", "--db", db, "--format", "json", "-q", "--bundle", bundle)
    assert out.returncode == 0, out.stderr
    v = json.loads(out.stdout)
    (gpu,) = v["gpus"]
    assert gpu["device"] == "cpu" and v["tiny"] and not v["links"]
    checks = {c["check"]: c for c in gpu["checks"]}
    assert set(checks) == {"matmul fp32", "matmul tf32", "matmul bf16", "matmul fp16", "membw", "h2d pinned",
                           "d2h pinned", "resnet50-train amp-bf16+channels-last"}
    assert all(c["status"] == "ok" and c["value"] > 0 for c in checks.values())
    assert gpu["verdict"] == "OK" and v["level"] == "quick" and "two or more CUDA GPUs" in v["pairs_skipped"]
    assert checks["matmul bf16"]["unit"] == "TFLOP/s"
    assert gpu["acceptance"]["gemm_results_checked"] == 55 and gpu["acceptance"]["counters"] == "not available"
    written = json.loads(open(bundle).read())
    assert written["sha256"] == B.content_hash(written) and len(written["results"]) == 8
    assert written["doctor"]["acceptance"]["gpus"]["cpu"]["memtest"]["bad_words"] == 0
    assert cli("fleet", bundle).returncode == 0
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


@pytest.mark.slow
def test_a_patched_gemm_kernel_is_caught_and_the_device_named(cli, tmp_path, monkeypatch):
    """One element of every GEMM result changed (a silent data corruption): doctor says WRONG, exit 1."""
    real = torch.matmul

    def corrupt(a, b, *args, **kw):
        out = real(a, b, *args, **kw)
        out.view(-1)[1] = -out.view(-1)[1] + 3      # never equal to itself: the operands are integers
        return out

    monkeypatch.setattr(torch, "matmul", corrupt)
    bundle = str(tmp_path / "bad.json")
    out = cli("doctor", "--db", str(tmp_path / "d.db"), "--format", "json", "-q", "--bundle", bundle)
    assert out.returncode == 1, out.stderr
    (gpu,) = json.loads(out.stdout)["gpus"]
    assert gpu["device"] == "cpu" and gpu["verdict"] == "WRONG"
    assert [w.split(":")[0] for w in gpu["why"]] == ["GEMM fp32", "GEMM tf32", "GEMM bf16", "GEMM fp16"]
    assert "5 of 5 results wrong (5 elements differ" in gpu["why"][0]
    fleet = cli("fleet", bundle, "--format", "json")        # the bundle says so to anyone who reads it
    assert fleet.returncode == 1 and json.loads(fleet.stdout)["named"]["gpus"][0]["unit"].endswith("/cpu:0")


@pytest.mark.slow
def test_a_short_burn_in_on_the_cpu(cli, tmp_path):
    out = cli("doctor", "--db", str(tmp_path / "d.db"), "--format", "json", "-q", "--level", "burn-in",
              "--minutes", "0.05", "--bundle", str(tmp_path / "b.json"))
    assert out.returncode == 0, out.stderr
    v = json.loads(out.stdout)
    (gpu,) = v["gpus"]
    b = gpu["acceptance"]["burn_in"]
    assert v["level"] == "burn-in" and b["seconds"] == 3.0 and b["burst_tflops"] > 0 and b["sustained_tflops"] > 0
    assert not gpu["why"] and any("no NVML" in n for n in gpu["notes"])   # tiny sizes: the ratio is not judged
    assert gpu["acceptance"]["gemm_results_checked"] > 55      # the burn-in's GEMMs are checked too


@pytest.mark.parametrize("args,words", [
    (("--level", "soak"), "--level 'soak'"),
    (("--minutes", "3"), "burn-in only"),
    (("--level", "burn-in", "--minutes", "0"), "more than 0"),
    (("--bundle", "/nonexistent-dir/x.json"), "--bundle"),
])
def test_doctor_usage_errors_are_one_line_and_exit_2(cli, tmp_path, args, words):
    out = cli("doctor", "--db", str(tmp_path / "d.db"), *args)
    assert out.returncode == 2 and words in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "d.db").exists()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_doctor_follows_the_sigterm_contract_of_run(tmp_path, sig):
    """A pre-empted doctor (SIGTERM) or one whose terminal closed (SIGHUP) ends as `run` does: the
    checks finished before it are kept, the run reads `interrupted`, one line, exit code 130."""
    db = str(tmp_path / "doc.db")
    runner = start_runner("doctor", "--db", db, "-q", "--bundle", str(tmp_path / "b.json"), cwd=str(tmp_path))
    try:   # one check stored, the next one measuring: the signal lands mid-suite
        wait_for(lambda: count(db) >= 1 and case_children(psutil.Process(runner.pid)), 300, "a second check")
        stored = count(db)
        runner.send_signal(sig)
        out, err = runner.communicate(timeout=300)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == 130, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted:") and "Traceback" not in err, err
    store = Store(db)
    (run,) = store.runs()
    assert run["status"] == "interrupted" and run["id"] in lines[0]
    kept = store.results([run["id"]])
    assert len(kept) >= stored and all(r.status == "ok" for r in kept[:stored])
    store.close()
    assert not (tmp_path / "b.json").exists()
