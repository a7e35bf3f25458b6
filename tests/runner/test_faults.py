"""Promise 2: a case that runs out of memory, one whose process dies on a signal
and one that hangs past its time limit are each stored with their status, the
suite goes on to the next case, and no process is left behind."""

from __future__ import annotations

import signal
import time

import psutil

from tests.procs import TINY, alive, case_children, case_of, child_stderr, start_runner, wait_for
from gpuarena.store.db import Store

# One suite, four cases in order; the batch size tells the test which is which.
# The memory cap (1 GiB on top of torch's own footprint) holds the tiny cases
# (~250 MB) but not a 256-image batch at 224x224 (one activation alone is 784 MiB).
SUITE = "name: faults\n" + TINY + """entries:
  - workload: resnet50-train
    params: {batch_size: 256, image_size: 224}
  - workload: resnet50-train
    params: {batch_size: 3}
    method: {steps: 100000, timeout_s: 300}
  - workload: resnet50-train
    params: {batch_size: 4}
    method: {steps: 100000, timeout_s: 4}
  - workload: resnet50-train
    params: {batch_size: 5}
"""
CAP_MB = "1024"


def test_oom_crash_timeout_then_ok(tmp_path, suite_file):
    db = str(tmp_path / "f.db")
    runner = start_runner("run", "--suite", suite_file(SUITE), "--db", db, "-q", cwd=str(tmp_path),
                          env={"GPUARENA_MEMORY_CAP_MB": CAP_MB})
    proc = psutil.Process(runner.pid)
    seen: dict[int, psutil.Process] = {}

    def crash_case_running():
        for p in case_children(proc):
            seen[p.pid] = p
            case = case_of(p)
            # Wait until it is measuring: the child has announced its case on stderr.
            if case and case["params"]["batch_size"] == 3 and "gpuarena child" in child_stderr(p):
                return p
        return None

    try:
        victim = wait_for(crash_case_running, 300, "the second case to start")
        time.sleep(1.0)  # into torch import / the step loop
        victim.send_signal(signal.SIGSEGV)  # what a driver fault looks like from outside
        while runner.poll() is None:  # record every child the runner starts, to check none is left
            for p in case_children(proc):
                seen[p.pid] = p
            time.sleep(0.2)
        out, err = runner.communicate(timeout=300)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == 0, err
    assert len(seen) >= 3
    assert not alive(list(seen.values())), "a case's process outlived its case"

    store = Store(db)
    rows = store.results()
    by_batch = {r.params["batch_size"]: r for r in rows}
    assert [r.params["batch_size"] for r in rows] == [256, 3, 4, 5]  # in order, none skipped

    oom = by_batch[256]
    assert oom.status == "oom", (oom.status, oom.error)
    assert "allocate" in oom.error

    crashed = by_batch[3]
    assert crashed.status == "crashed"
    assert "killed by signal SIGSEGV" in crashed.error
    assert "gpuarena child" in crashed.extra.stderr_tail  # the tail of its stderr is kept
    assert "resnet50-train [seed] batch_size=3" in crashed.extra.stderr_tail

    ok = by_batch[5]
    assert ok.status == "ok"
    assert ok.throughput_median > 0

    timeout = by_batch[4]
    assert timeout.status == "timeout"
    assert timeout.error == "killed after the 4 s time limit"
    # killed at its limit, not run on: its 100,000 steps would take hours.  The bound is in this machine's
    # own pace (half the time 100,000 steps of the ok case's batch take here), so a loaded machine, which
    # slows both, cannot break it.
    assert 4 <= timeout.extra.wall_s < 100_000 * ok.latency.median / 2

    run = store.runs()[0]
    assert run["status"] == "complete" and run["results"] == 4


def test_onednn_allocation_failure_counts_as_oom_only_under_a_cap():
    """oneDNN says 'could not create a primitive' when RLIMIT_AS stops its allocation."""
    import subprocess
    import sys

    code = ("import resource\nfrom gpuarena.runner.measure_case import is_oom\n"
            "e = RuntimeError('could not create a primitive')\n"
            "print(is_oom(e))\n"
            "resource.setrlimit(resource.RLIMIT_AS, (2**40, 2**40))\n"
            "print(is_oom(e))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
