"""Promise 1: SIGKILL to the runner mid-suite loses no finished result, leaves no
process behind and no damaged database, and --resume finishes the run."""

from __future__ import annotations

import signal
import sqlite3

import psutil

from tests.procs import TINY, alive, case_children, count, start_runner, wait_for
from gpuarena.spec.model import Case
from gpuarena.store.db import Store

SUITE = "name: killed\n" + TINY + """entries:
  - workload: resnet50-train
    grid: {batch_size: [2, 3, 4]}
"""


def test_sigkill_runner_then_resume(tmp_path, suite_file, cli):
    db = str(tmp_path / "k.db")
    runner = start_runner("run", "--suite", suite_file(SUITE), "--db", db, "-q", cwd=str(tmp_path))
    proc = psutil.Process(runner.pid)
    try:
        wait_for(lambda: count(db) >= 1, 300, "the first result to be committed")
        # Kill while a case is being measured: its child has started and is not done.
        running = wait_for(lambda: case_children(proc), 300, "the next case's child process")
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=300)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == -signal.SIGKILL

    # The orphaned child notices its runner is gone and ends its process group.
    # it polls every 0.25 s; the wait is sized for a loaded machine, where a poll can be late by seconds
    gone, left = psutil.wait_procs(running, timeout=120)
    assert not alive(left), f"child outlived its runner: {[p.pid for p in left]}"

    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    store = Store(db)
    (run_id,) = [r["id"] for r in store.runs()]
    before = store.results([run_id])
    assert 1 <= len(before) < 3
    assert all(r.status == "ok" for r in before), [(r.status, r.error, r.extra) for r in before]
    # never marked complete; its owner is gone, so it reads as interrupted (docs/guarantees.md, part four)
    assert store.run(run_id)["status"] == "interrupted"
    store.close()

    # A pre-empted resume (SIGTERM mid-case) ends cleanly: exit 130, run marked
    # interrupted, the case's process killed with it.
    runner = start_runner("run", "--resume", run_id, "--db", db, "-q", cwd=str(tmp_path))
    try:
        running = wait_for(lambda: case_children(psutil.Process(runner.pid)), 300, "a resumed case to start")
        runner.send_signal(signal.SIGTERM)
        _, err = runner.communicate(timeout=300)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == 130, err
    assert f"resuming run {run_id}: {len(before)} of 3 cases already stored" in err
    assert f"gpuarena run --resume {run_id}" in " ".join(err.split())  # rich wraps lines
    # The runner kills the case it waits on; a SIGTERM that lands while the case is still being
    # forked (before the runner holds its handle) leaves it to the child's watchdog, which ends it
    # within a poll of the runner's exit: the wait is sized for a loaded machine, as above.
    _, left = psutil.wait_procs(running, timeout=120)
    assert not alive(left)
    store = Store(db)
    assert store.run(run_id)["status"] == "interrupted"
    stored = len(store.results([run_id]))
    store.close()

    res = cli("run", "--resume", run_id, "--db", db, "-q")
    assert res.returncode == 0, res.stderr
    assert f"resuming run {run_id}: {stored} of 3 cases already stored" in res.stderr

    store = Store(db)
    after = store.results([run_id])
    plan_keys = sorted(Case(**c).key for c in store.run(run_id)["plan"])
    assert sorted(r.case_key for r in after) == plan_keys  # one result per planned case
    # The results stored before the kill are untouched, not measured again.
    assert [(r.id, r.created_at) for r in after[:len(before)]] == \
        [(r.id, r.created_at) for r in before]
    assert all(r.status == "ok" for r in after)
    assert store.run(run_id)["status"] == "complete"

    # Resuming a complete run measures nothing.
    res = cli("run", "--resume", run_id, "--db", db, "-q")
    assert res.returncode == 0, res.stderr
    assert "3 of 3 cases already stored" in res.stderr
    assert count(db) == 3
