"""Promise 3: several writers on one database at once (parallel `gpuarena run`
processes and threads adding results directly) lose nothing, and no "database is
locked" reaches the user.  The database does not exist when they all start, so
the schema migration races too."""

from __future__ import annotations

import sqlite3
import threading

from tests.procs import TINY, count, start_runner
from gpuarena.store.db import Store

RUNNERS = 3
THREADS = 2
ROWS_PER_THREAD = 60


def test_parallel_runs_and_threads_share_one_db(tmp_path, suite_file):
    db = str(tmp_path / "shared.db")
    suite = suite_file("name: parallel\n" + TINY.replace("repeats: 2", "repeats: 1")
                       + "entries:\n  - workload: matmul\n")
    runners = [start_runner("run", "--suite", suite, "--db", db, "-q", cwd=str(tmp_path)) for _ in range(RUNNERS)]

    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            store = Store(db)
            run_id = store.create_run(f"thread-{n}", "cpu", [], None)
            for i in range(ROWS_PER_THREAD):
                store.add_result({"run_id": run_id, "case_key": f"{n}/{i}", "workload": "resnet50-train",
                                  "variant": "seed", "params": {"i": i}, "status": "ok",
                                  "throughput_median": float(i + 1)})
            store.set_run_status(run_id, "complete")
            store.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    outs = []
    try:
        for r in runners:
            outs.append(r.communicate(timeout=300))
    finally:
        for r in runners:
            if r.poll() is None:
                r.kill()
                r.wait()
    for t in threads:
        t.join(timeout=600)

    assert not errors, errors
    for r, (out, err) in zip(runners, outs):
        assert r.returncode == 0, err
        assert "locked" not in (out + err).lower()

    assert count(db) == RUNNERS + THREADS * ROWS_PER_THREAD
    assert count(db, "SELECT COUNT(*) FROM results WHERE status = 'ok'") == RUNNERS + THREADS * ROWS_PER_THREAD
    assert count(db, "SELECT COUNT(*) FROM runs WHERE status = 'complete'") == RUNNERS + THREADS
    assert count(db, "SELECT COUNT(*) FROM environments") == 1  # the same machine, registered once
    for n in range(THREADS):  # each thread's rows, in its own order
        rows = Store(db).results(workload="resnet50-train")
        mine = [r.params["i"] for r in rows if r.case_key.startswith(f"{n}/")]
        assert mine == list(range(ROWS_PER_THREAD))
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_a_lock_held_too_long_is_one_clear_line(tmp_path):
    """Past the busy timeout the user gets a sentence, not a traceback or a false "not a database"."""
    import pytest

    from gpuarena.errors import UserError

    db = str(tmp_path / "held.db")
    Store(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # what a stuck writer in another process looks like
    try:
        with pytest.raises(UserError, match="kept the database locked"):
            store = Store(db, timeout_s=0.2)
            store.create_run("x", "cpu", [], None)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert count(db, "SELECT COUNT(*) FROM runs") == 0
