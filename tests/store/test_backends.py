"""The store's guarantees, each tested against both back ends (the `db` fixture: an SQLite file
and a database on a real, throwaway PostgreSQL server): schema and migrations, typed round trip,
constraints, the run lock, read-only opening, export/import, 8 writer processes at once, and a
writer killed inside its transaction losing only its own row."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from gpuarena.store.rows import ResultRefused

from gpuarena.errors import UserError
from gpuarena.store import bundle as B
from gpuarena.store.db import Store
from gpuarena.store.migrations import MIGRATIONS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "src")


def _result(run_id: str, i: int, **over) -> dict:
    return {"run_id": run_id, "case_key": f"k/{i}", "workload": "matmul", "variant": "seed",
            "params": {"n": 64, "dtype": "bf16"}, "status": "ok", "throughput_median": 1234.5678901234 + i,
            "throughput": {"n": 3, "median": 1.5, "mean": 1.5, "ci95_low": 1.4, "ci95_high": 1.6},
            "samples": [0.1, 0.11, 0.12], "peak_memory_bytes": 1 << 40, "throttled": True,
            "warnings": ["CV 6% above 5%: spread"], "extra": {"world_size": 1, "note": "a % and a ?"}, **over}


def _count(store, sql="SELECT COUNT(*) FROM results") -> int:
    return store.conn.execute(sql).fetchone()[0]


def test_schema_is_migrated_and_reopened(db):
    s = Store(db)
    assert s.schema_version == len(MIGRATIONS)
    s.close()
    s = Store(db)                      # a second open migrates nothing
    assert s.schema_version == len(MIGRATIONS)
    s.close()
    r = Store(db, readonly=True)
    assert r.results() == [] and r.runs() == []
    r.close()


def test_round_trip_keeps_types_and_precision(db):
    s = Store(db)
    env = s.env_id({"gpu": "H200", "driver": "570"}, key="abc123")
    assert s.env_id({"gpu": "H200", "driver": "570"}, key="abc123") == env     # stored once
    assert s.environment(env) == {"gpu": "H200", "driver": "570"}
    run = s.create_run("suite", "cpu", [{"case": 1}], env, argv=["run"])
    rid = s.add_result(_result(run, 0, env_id=env))
    assert isinstance(rid, int)
    (got,) = s.results([run])
    assert got.throughput_median == 1234.5678901234         # double precision, not float4
    assert got.peak_memory_bytes == 1 << 40                 # 64-bit integers
    assert got.throttled is True and got.params == {"n": 64, "dtype": "bf16"}
    assert got.extra.note == "a % and a ?"                # no placeholder mangling
    assert got.uid and got.created_at
    assert s.run(run)["plan"] == [{"case": 1}]
    assert s.latest_run_id() == run
    assert s.runs()[0]["results"] == 1
    assert s.done_keys(run) == {"k/0"}


def test_constraints_hold(db):
    s = Store(db)
    run = s.create_run("suite", "cpu", [], None)
    s.add_result(_result(run, 0, status="skipped", throughput_median=None))   # migration 2's status
    with pytest.raises((sqlite3.IntegrityError, ResultRefused)):     # refused on the way in, else by the schema
        s.add_result(_result(run, 1, status="bogus"))
    first = s.results([run])[0]
    with pytest.raises(sqlite3.IntegrityError):                 # uid is unique
        with s.transaction() as conn:
            from gpuarena.store.rows import insert_result
            insert_result(conn, {**_result(run, 2), "uid": first.uid})
    assert _count(s) == 1                                        # the failed writes left nothing


def test_run_lock(db):
    s = Store(db)
    run = s.create_run("suite", "cpu", [], None)
    s.claim_run(run)
    with pytest.raises(UserError, match="being measured by process"):
        Store(db).claim_run(run)
    s.release_run(run, "interrupted")
    Store(db).claim_run(run)


def test_readonly_never_writes(db):
    s = Store(db)
    run = s.create_run("suite", "cpu", [], None)
    s.close()
    r = Store(db, readonly=True)
    with pytest.raises(sqlite3.DatabaseError):
        r.conn.execute("INSERT INTO runs(id, created_at, suite, device, plan) VALUES ('x','t','s','d','[]')")
    assert [x["id"] for x in r.runs()] == [run]


def test_export_import_between_back_ends(db, tmp_path):
    src = Store(db)
    run = src.create_run("suite", "cpu", [], src.env_id({"gpu": "H200"}))
    for i in range(3):
        src.add_result(_result(run, i, env_id=1))
    path = str(tmp_path / "b.json")
    B.write(B.export(src, [run]), path)
    other = Store(str(tmp_path / "other.db"))
    assert B.import_bundle(other, path)["imported"] == 3
    again = B.import_bundle(src, path)                  # back home: recognised, nothing doubled
    assert again["imported"] == 0 and again["skipped_duplicates"] == 3
    assert _count(src) == 3


WRITER = textwrap.dedent("""
    import sys
    from gpuarena.store.db import Store
    db, n, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    s = Store(db)
    run = s.create_run(f"writer-{n}", "cpu", [], s.env_id({"host": "same"}))
    for i in range(rows):
        s.add_result({"run_id": run, "case_key": f"{n}/{i}", "workload": "matmul", "variant": "seed",
                      "params": {"i": i}, "status": "ok", "throughput_median": float(i + 1)})
    s.set_run_status(run, "complete")
""")


def _python(*args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-c", *args], env=env, text=True, **kw)


def test_eight_writer_processes_lose_nothing(db):
    """The database is empty when they start: the migration races too."""
    writers, rows = 8, 25
    procs = [_python(WRITER, db, str(n), str(rows), stderr=subprocess.PIPE) for n in range(writers)]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * writers, [e[-2000:] for p, e in zip(procs, errs) if p.returncode]
    s = Store(db, readonly=True)
    assert _count(s) == writers * rows
    assert _count(s, "SELECT COUNT(*) FROM runs WHERE status = 'complete'") == writers
    assert _count(s, "SELECT COUNT(*) FROM environments") == 1
    for n in range(writers):
        mine = [r.params["i"] for r in s.results() if r.case_key.startswith(f"{n}/")]
        assert mine == list(range(rows))


KILLED = textwrap.dedent("""
    import sys, time
    from gpuarena.store.db import Store
    from gpuarena.store.rows import insert_result
    s = Store(sys.argv[1])
    run = s.create_run("doomed", "cpu", [], None)
    s.add_result({"run_id": run, "case_key": "kept", "workload": "matmul", "variant": "seed",
                  "params": {}, "status": "ok", "throughput_median": 1.0})
    with s.transaction() as conn:
        insert_result(conn, {"run_id": run, "case_key": "in-flight", "workload": "matmul",
                             "variant": "seed", "params": {}, "status": "ok", "throughput_median": 2.0})
        print("inside", flush=True)
        time.sleep(600)
""")


def test_a_killed_writer_loses_only_its_uncommitted_row(db):
    Store(db).close()
    p = _python(KILLED, db, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout.readline().strip() == "inside", p.stderr.read()
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
    s = Store(db, timeout_s=30)        # the write lock died with the writer
    run = s.create_run("after", "cpu", [], None)
    s.add_result(_result(run, 0))
    keys = sorted(r.case_key for r in s.results())
    assert keys == ["k/0", "kept"]


def test_a_bad_bundle_is_refused_whole(db, tmp_path):
    src = Store(str(tmp_path / "src.db"))
    run = src.create_run("suite", "cpu", [], None)
    for i in range(3):
        src.add_result(_result(run, i))
    bundle = B.export(src)
    bundle["results"][-1]["status"] = "great"
    path = tmp_path / "bad.json"
    path.write_text(__import__("json").dumps(bundle))
    target = Store(db)
    with pytest.raises(UserError, match="status"):
        B.import_bundle(target, str(path))
    assert _count(target) == 0 and _count(target, "SELECT COUNT(*) FROM runs") == 0


def test_readers_skip_a_row_they_cannot_use(db):
    s = Store(db)
    run = s.create_run("suite", "cpu", [], None)
    s.add_result(_result(run, 0))
    with s.transaction() as conn:      # a row no gpuarena would write: a negative throughput
        conn.execute("INSERT INTO results(run_id, case_key, workload, variant, params, status, "
                     "throughput_median, created_at) VALUES (?, 'bad', 'matmul', 'seed', '{}', 'ok', -1.0, 'now')",
                     (run,))
    r = Store(db, readonly=True)
    assert [x.case_key for x in r.results()] == ["k/0"] and len(r.skipped) == 1


def test_a_newer_schema_or_a_foreign_database_is_refused_untouched(db):
    s = Store(db)
    with s.transaction() as conn:
        if s.is_postgres:
            conn.execute("UPDATE gpuarena_schema SET version = 99")
        else:
            conn.execute("PRAGMA user_version = 99")
    s.close()
    with pytest.raises(UserError, match="newer than this gpuarena"):
        Store(db)
    with pytest.raises(UserError, match="newer than this gpuarena"):
        Store(db, readonly=True)


def test_a_foreign_postgres_database_is_left_untouched(pg_url):
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE customers (id int)")
    with pytest.raises(UserError, match="not a gpuarena database"):
        Store(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        names = {r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_schema = current_schema()")}
    assert names == {"customers"}


def test_a_lock_held_too_long_is_one_clear_line(db):
    Store(db).close()
    holder = Store(db)
    tx = holder.transaction()
    tx.__enter__()                      # a stuck writer in another connection holds the write lock
    try:
        with pytest.raises(UserError, match="kept the database locked"):
            Store(db, timeout_s=0.3).create_run("x", "cpu", [], None)
    finally:
        tx.__exit__(None, None, None)
    assert _count(holder, "SELECT COUNT(*) FROM runs") == 0


def test_a_nul_in_an_identity_is_refused_alike_on_both_stores(db):
    """PostgreSQL's text cannot hold NUL: SQLite stored such a case_key, PostgreSQL failed mid-write."""
    from gpuarena.store.rows import validated

    store = Store(db)
    run_id = store.create_run("s", "cpu", [], None)
    row = {"run_id": run_id, "workload": "matmul", "variant": "seed", "params": {}, "device": "cpu",
           "device_name": "cpu", "status": "failed", "error": "x", "unit": "x", "source": "measured"}
    with pytest.raises(ResultRefused, match="NUL"):
        store.add_result({**row, "case_key": "a\x00b"})
    with pytest.raises(ResultRefused, match="NUL"):      # an import's uid
        validated({**row, "case_key": "k", "uid": "a\x00b"})
    assert store.done_keys(run_id) == set()
    store.close()
