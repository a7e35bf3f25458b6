"""A store that stops answering, dies or stays locked in the middle of a run loses no measured case
(issue 40, items 4-5): the case measured meanwhile is kept as a pending file, the command ends
within its stated bound with one line and exit code 2, the run reads as interrupted, and
`run --resume` stores the kept result without measuring it again.

Real faults on real servers: the PostgreSQL cluster of this module (its own, so that stopping or
killing it disturbs no other test) is frozen with SIGSTOP, killed (pg_ctl stop -m immediate) or
held by another connection's write lock; an SQLite file is held by another connection's BEGIN
IMMEDIATE.  The product's store timeout is set small (GPUARENA_DB_TIMEOUT_S=1), so every wait is
a few seconds; each wait of the test itself is bounded too (BOUND_S, pytest-timeout)."""

from __future__ import annotations

import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.store.conftest import Cluster, url_for

pytestmark = pytest.mark.timeout(300)

STORE_TIMEOUT_S = 1.0   # GPUARENA_DB_TIMEOUT_S for the product under test
# A failing command waits at most: the lock wait (T) or the client's watchdog (T + 3 s), then one
# reconnect to mark the run (connect_timeout, 2 s at least): under 10 s; 60 s leaves room for a loaded CI.
BOUND_S = 60.0
RUN = ("run", "-w", "matmul", "--set", "dtype=fp32", "--set", "m=32,48", "--repeats", "2", "-q")
_names = itertools.count()


@pytest.fixture(scope="module")
def cluster():
    c = Cluster()
    try:
        yield c
    finally:
        c.close()


def _new_db(cluster) -> str:
    import psycopg

    name = f"f{os.getpid()}_{next(_names)}"
    with psycopg.connect(url_for(cluster.home, "postgres"), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return url_for(cluster.home, name)


def _env() -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(ROOT) / "src"), OMP_NUM_THREADS="1",
               GPUARENA_DB_TIMEOUT_S=str(STORE_TIMEOUT_S))
    env.pop("GPUARENA_DB", None)
    return env


def _start(cwd: Path, db: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gpuarena", *RUN, "--db", db], cwd=cwd, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _claimed_run(db: str, proc: subprocess.Popen) -> str:
    """The run's id once the runner holds it (its last database write before the first case ends)."""
    from gpuarena.store.db import Store

    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            s = Store(db, readonly=True)
        except Exception:  # noqa: BLE001 - not created yet
            time.sleep(0.05)
            continue
        try:
            row = s.conn.execute("SELECT id FROM runs WHERE owner IS NOT NULL").fetchone()
        except sqlite3.DatabaseError:   # the schema not migrated yet
            row = None
        finally:
            s.close()
        if row:
            return row[0]
        time.sleep(0.05)
    raise AssertionError("the run was never claimed")


def _signal(pids: list[int], sig) -> None:
    """Signal the server's processes; one that ended meanwhile (a backend whose client left) is skipped."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _ends_within_bound(proc: subprocess.Popen) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"the runner waited past {BOUND_S} s on a stalled store: {err[-2000:]}") from None
    return out, err


def _kept_then_resumed(db: str, cwd: Path, run_id: str, proc, out: str, err: str) -> None:
    from gpuarena.store.db import Store

    assert proc.returncode == 2, err[-3000:]
    errors = [ln for ln in err.splitlines() if ln.startswith("gpuarena: error")]
    assert len(errors) == 1 and "kept in" in errors[0] and f"--resume {run_id}" in errors[0], err[-3000:]
    assert "Traceback" not in err and "psycopg" not in err.lower()
    kept = errors[0].split("kept in ", 1)[1].split(";")[0]
    assert os.path.isfile(kept)
    folder = os.path.dirname(kept)
    assert os.stat(folder).st_mode & 0o777 == 0o700 and os.stat(os.path.dirname(folder)).st_mode & 0o777 == 0o700
    s = Store(db, readonly=True)
    try:
        assert s.run(run_id)["status"] == "interrupted"       # its owner is gone, whatever it could mark
        assert s.done_keys(run_id) == set()
    finally:
        s.close()
    r = subprocess.run([sys.executable, "-m", "gpuarena", "run", "--resume", run_id, "-q", "--db", db], cwd=cwd,
                       env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "stored 1 result(s) kept from an earlier" in r.stderr and "1 case(s)" in r.stderr, r.stderr[-3000:]
    s = Store(db, readonly=True)
    try:
        assert len(s.done_keys(run_id)) == 2 and s.run(run_id)["status"] == "complete"
    finally:
        s.close()
    assert not os.path.exists(kept)


def test_a_frozen_postgres_server_loses_no_measurement(cluster, tmp_path):
    db = _new_db(cluster)
    proc = _start(tmp_path, db)
    run_id = _claimed_run(db, proc)
    frozen = cluster.pids()
    try:
        _signal(frozen, signal.SIGSTOP)
        out, err = _ends_within_bound(proc)
    finally:
        _signal(frozen, signal.SIGCONT)
    assert "did not answer within" in err, err[-2000:]
    _kept_then_resumed(db, tmp_path, run_id, proc, out, err)


def test_a_killed_postgres_server_loses_no_measurement(cluster, tmp_path):
    db = _new_db(cluster)
    proc = _start(tmp_path, db)
    run_id = _claimed_run(db, proc)
    cluster.stop()
    try:
        out, err = _ends_within_bound(proc)
    finally:
        cluster.start()
    _kept_then_resumed(db, tmp_path, run_id, proc, out, err)


def test_a_postgres_store_locked_past_its_timeout_loses_no_measurement(cluster, tmp_path):
    import psycopg

    from gpuarena.store.pg_connection import LOCK_KEY

    db = _new_db(cluster)
    proc = _start(tmp_path, db)
    run_id = _claimed_run(db, proc)
    with psycopg.connect(db, autocommit=True) as holder:
        holder.execute(f"SELECT pg_advisory_lock({LOCK_KEY})")     # another writer that never lets go
        out, err = _ends_within_bound(proc)
        holder.execute(f"SELECT pg_advisory_unlock({LOCK_KEY})")
    assert "locked" in err, err[-2000:]
    _kept_then_resumed(db, tmp_path, run_id, proc, out, err)


def test_an_sqlite_store_locked_past_its_timeout_loses_no_measurement(tmp_path):
    db = str(tmp_path / "g.db")
    proc = _start(tmp_path, db)
    run_id = _claimed_run(db, proc)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        out, err = _ends_within_bound(proc)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "locked" in err, err[-2000:]
    _kept_then_resumed(db, tmp_path, run_id, proc, out, err)


def test_sigterm_while_the_server_is_frozen_ends_at_once(cluster, tmp_path):
    """SIGTERM during a statement the server never answers: no cancel request waited on, no driver
    lines; the command ends within the bound (the run reads as interrupted)."""
    from gpuarena.store.db import Store

    db = _new_db(cluster)
    proc = _start(tmp_path, db)
    run_id = _claimed_run(db, proc)
    frozen = cluster.pids()
    try:
        _signal(frozen, signal.SIGSTOP)
        time.sleep(STORE_TIMEOUT_S)
        proc.send_signal(signal.SIGTERM)
        out, err = _ends_within_bound(proc)
    finally:
        _signal(frozen, signal.SIGCONT)
    assert proc.returncode in (2, 130) and "Traceback" not in err and "psycopg" not in err.lower(), err[-3000:]
    s = Store(db, readonly=True)
    try:
        assert s.run(run_id)["status"] == "interrupted"
    finally:
        s.close()
