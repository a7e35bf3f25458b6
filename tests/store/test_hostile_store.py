"""Issue 18, the database: each attack performed through the real CLI on a real
SQLite file; each refusal is one line and exit 2 with the file byte-identical,
each reader skips (with a warning) what it cannot use and shows the rest."""

from __future__ import annotations

import glob
import json
import os
import sqlite3
import subprocess
import sys

import pytest

from tests.conftest import gpuarena
from tests.procs import ROOT, digest, make_bundle, one_line_error

DOCS_DATA = sorted(glob.glob(os.path.join(ROOT, "docs", "data", "*.json")))


def _bundle(tmp_path, data, name="b.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def _rows(db: str, sql: str = "SELECT COUNT(*) FROM results") -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def _imported_db(tmp_path, n: int = 3) -> str:
    db = str(tmp_path / "r.db")
    p = gpuarena("import", _bundle(tmp_path, make_bundle(n), "seed.json"), "--db", db, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    return db


# --- item 4: nested fields validated on import; readers skip a row they cannot use ---------------

BAD_NESTED = {
    "throughput-cv": lambda r: r["throughput"].update(cv="abc"),
    "telemetry": lambda r: r.update(telemetry=[{"t": 0.0, "power_w": "hot"}]),
    "extra-world-size": lambda r: r["extra"].update(world_size="two"),
    "extra-accum-steps": lambda r: r.update(workload="ddp-train", extra={"accum_steps": "x"}),
    "params-batch-abc": lambda r: r.update(workload="resnet50-train", params={"batch_size": "abc"}),
    "params-batch-negative": lambda r: r.update(workload="resnet50-train", params={"batch_size": -256}),
    "fingerprint": None,
}


@pytest.mark.parametrize("case", sorted(BAD_NESTED))
def test_bad_nested_field_refuses_whole_bundle(tmp_path, case):
    db = _imported_db(tmp_path)
    data = make_bundle(3, run_id="20260202-000000-bbbbbb")
    if case == "fingerprint":
        data["environments"][0]["fingerprint"] = "not a mapping"
    else:
        BAD_NESTED[case](data["results"][1])
    before = digest(db)
    p = gpuarena("import", _bundle(tmp_path, data), "--db", db, cwd=str(tmp_path))
    one_line_error(p, 2, "refused, nothing imported")
    assert digest(db) == before


def test_readers_skip_a_row_they_cannot_use(tmp_path):
    db = _imported_db(tmp_path, 3)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE results SET throughput = '{\"n\": 2, \"median\": \"abc\", \"mean\": 1}' WHERE id = 2")
    conn.execute("UPDATE results SET extra = '{\"sets\": \"x\"}' WHERE id = 3")   # matmul's: an int
    conn.commit()
    conn.close()
    p = gpuarena("results", "--db", db, "-f", "json", cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert [r["id"] for r in json.loads(p.stdout)] == [1]
    assert p.stderr.count("\n") == 1 and "skipped 2 stored result(s)" in p.stderr
    out = str(tmp_path / "r.html")
    p = gpuarena("report", "--db", db, "-o", out, cwd=str(tmp_path))
    assert p.returncode == 0 and os.path.getsize(out) > 0 and "skipped 2" in p.stderr, p.stderr
    p = gpuarena("export", "--db", db, "-o", str(tmp_path / "e.json"), cwd=str(tmp_path))
    assert p.returncode == 0 and "exported 1 result(s)" in p.stdout, p.stderr


@pytest.mark.parametrize("path", DOCS_DATA, ids=os.path.basename)
def test_shipped_bundles_import_and_read_without_a_skip(tmp_path, path):
    db = str(tmp_path / "d.db")
    p = gpuarena("import", path, "--db", db, cwd=str(tmp_path))
    assert p.returncode == 0 and "imported" in p.stdout, p.stderr
    n = len(json.load(open(path))["results"])
    p = gpuarena("results", "--db", db, "-f", "json", cwd=str(tmp_path))
    assert p.returncode == 0 and p.stderr == "" and len(json.loads(p.stdout)) == n, p.stderr[-500:]


# --- item 5: a damaged file is refused before anything is written --------------------------------

def test_damaged_database_refused_by_run_and_import(tmp_path):
    db = _imported_db(tmp_path, 400)
    assert os.path.getsize(db) > 41060 + 64
    with open(db, "r+b") as f:  # page 11 from its header past offset 41060, as the attack
        f.seek(40960)
        f.write(b"\xde\xad\xbe\xef" * 64)
    before = digest(db)
    p = gpuarena(*TINY_RUN_ARGS, "--db", db, cwd=str(tmp_path))
    one_line_error(p, 2, "damaged")
    p = gpuarena("results", "--db", db, cwd=str(tmp_path))
    one_line_error(p, 2, "damaged")
    p = gpuarena("import", _bundle(tmp_path, make_bundle(2, "20260303-000000-cccccc")), "--db", db, cwd=str(tmp_path))
    one_line_error(p, 2, "damaged")
    assert digest(db) == before


TINY_RUN_ARGS = ("run", "-w", "matmul", "--set", "size=tiny", "--set", "repeats=2", "--set", "steps=2",
                 "--set", "warmup=0", "-q")


# --- items 6, 14, 15, 18: reading commands never change a file ------------------------------------

def _foreign(tmp_path, version: int = 0) -> str:
    db = str(tmp_path / "other_app.db")
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO notes(body) VALUES ('keep me')")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()
    return db


@pytest.mark.parametrize("version", [0, 1], ids=["foreign", "foreign-user-version-1"])
@pytest.mark.parametrize("argv", [("results",), ("report", "-o", "x.html"), ("export", "-o", "x.json"),
                                  ("compare", "-b", "H200"), ("run", *TINY_RUN_ARGS[1:])],
                         ids=["results", "report", "export", "compare", "run"])
def test_foreign_sqlite_file_is_left_untouched(tmp_path, version, argv):
    db = _foreign(tmp_path, version)
    before = digest(db)
    p = gpuarena(*argv, "--db", db, cwd=str(tmp_path))
    one_line_error(p, 2, "not a gpuarena database")
    assert digest(db) == before and not os.path.exists(db + "-wal")
    assert not os.path.exists(tmp_path / "x.html") and not os.path.exists(tmp_path / "x.json")


def test_future_schema_refused_before_any_change(tmp_path):
    db = _imported_db(tmp_path, 2)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    before = digest(db)
    for argv in (("results",), TINY_RUN_ARGS):
        p = gpuarena(*argv, "--db", db, cwd=str(tmp_path))
        one_line_error(p, 2, "newer than this gpuarena")
    assert digest(db) == before
    with open(db, "rb") as f:
        assert f.read(20)[18:20] == b"\x01\x01"  # file format bytes: still rollback-journal, not WAL


def test_results_on_dev_null_creates_nothing(tmp_path):
    p = gpuarena("results", cwd=str(tmp_path), env={"GPUARENA_DB": "/dev/null"})
    one_line_error(p, 2, "not a regular file")
    assert not os.path.exists("/dev/null-journal") and not os.path.exists("/dev/null-wal")
    p = gpuarena(*TINY_RUN_ARGS, cwd=str(tmp_path), env={"GPUARENA_DB": "/dev/null"})
    one_line_error(p, 2, "not a regular file")
    assert not os.path.exists("/dev/null-journal") and not os.path.exists("/dev/null-wal")


# --- items 16, 17: read-only and immutable files --------------------------------------------------

def _chattr(flag: str, path: str) -> bool:
    return subprocess.run(["chattr", flag, path], capture_output=True).returncode == 0


def test_wal_database_in_a_read_only_folder_is_readable(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    db = str(folder / "r.db")
    p = gpuarena("import", _bundle(tmp_path, make_bundle(2)), "--db", db, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    if not _chattr("+i", str(folder)):
        pytest.skip("the filesystem refuses chattr +i (no read-only folder without mounting)")
    try:
        before = digest(db)
        p = gpuarena("results", "--db", db, "-f", "json", cwd=str(tmp_path))
        assert p.returncode == 0 and len(json.loads(p.stdout)) == 2, p.stderr
        p = gpuarena(*TINY_RUN_ARGS, "--db", db, cwd=str(tmp_path))
        one_line_error(p, 2, "cannot be written")
        assert digest(db) == before
    finally:
        _chattr("-i", str(folder))


def test_immutable_database_refused_by_writers(tmp_path):
    db = _imported_db(tmp_path, 2)
    if not _chattr("+i", db):
        pytest.skip("the filesystem refuses chattr +i")
    try:
        before = digest(db)
        for argv in (TINY_RUN_ARGS, ("import", "--published")):
            p = gpuarena(*argv, "--db", db, cwd=str(tmp_path))
            one_line_error(p, 2, "cannot be written")
        assert digest(db) == before
        main_file = digest(db)[db]
        p = gpuarena("results", "--db", db, cwd=str(tmp_path))
        assert p.returncode == 0, p.stderr
        assert digest(db)[db] == main_file  # a WAL reader may add the empty -shm index SQLite reads through
    finally:
        _chattr("-i", db)


# --- items 7, 9: a global identity; re-import as fast as import ----------------------------------

def test_round_trip_between_two_databases_duplicates_nothing(tmp_path):
    a, b = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    seed = _bundle(tmp_path, make_bundle(3), "seed.json")
    assert gpuarena("import", seed, "--db", a, cwd=str(tmp_path)).returncode == 0
    for src, dst, name in ((a, b, "ab.json"), (b, a, "ba.json"), (a, b, "ab2.json")):
        p = gpuarena("export", "--db", src, "-o", str(tmp_path / name), cwd=str(tmp_path))
        assert p.returncode == 0, p.stderr
        p = gpuarena("import", str(tmp_path / name), "--db", dst, cwd=str(tmp_path))
        assert p.returncode == 0, p.stderr
    assert _rows(a) == 3 and _rows(b) == 3
    assert "0 result(s)" in p.stdout and "3 already present" in p.stdout


def test_reimport_costs_about_what_import_did(tmp_path):
    """Work counted, never timed (a busy machine must pass): the Python calls of importing a bundle
    again, every result already present, stay within 1.5x of the first import's."""
    import cProfile
    import pstats

    path = _bundle(tmp_path, make_bundle(1000))
    db = str(tmp_path / "big.db")
    gpuarena("import", _bundle(tmp_path, make_bundle(1), "warm.json"), "--db", str(tmp_path / "warm.db"))

    def calls() -> tuple[int, str]:
        prof = cProfile.Profile()
        prof.enable()
        try:
            p = gpuarena("import", path, "--db", db, cwd=str(tmp_path))
        finally:
            prof.disable()
        assert p.returncode == 0, p.stderr
        return pstats.Stats(prof).total_calls, p.stdout

    first, out = calls()
    assert "imported 1000" in out
    again, out = calls()
    assert "1000 already present" in out and _rows(db) == 1000
    assert again < first * 1.5, (first, again)


# --- items 21, 22: nesting and size bounds ---------------------------------------------------------

def test_deeply_nested_params_refused_and_no_database_left(tmp_path):
    deep: dict = {}
    node = deep
    for _ in range(500):
        node["x"] = {}
        node = node["x"]
    data = make_bundle(1)
    data["results"][0]["params"] = deep
    db = str(tmp_path / "new.db")
    p = gpuarena("import", _bundle(tmp_path, data), "--db", db, cwd=str(tmp_path))
    one_line_error(p, 2, "nested deeper")
    assert not os.path.exists(db)


@pytest.mark.parametrize("field", ["params", "extra", "device_name"])
def test_huge_string_refused(tmp_path, field):
    data = make_bundle(1)
    r = data["results"][0]
    blob = "x" * 5_000_000
    if field == "device_name":
        r[field] = blob
    else:
        r[field] = {**r[field], "note": blob}
    db = _imported_db(tmp_path, 1)
    before = digest(db)
    p = gpuarena("import", _bundle(tmp_path, data), "--db", db, cwd=str(tmp_path))
    one_line_error(p, 2, "refused, nothing imported")
    assert digest(db) == before


def test_control_characters_refused_on_import(tmp_path):
    data = make_bundle(1)
    data["results"][0]["device_name"] = "NVIDIA \x1b[2J\x1b]0;pwned\x07H200"
    db = _imported_db(tmp_path, 1)
    before = digest(db)
    p = gpuarena("import", _bundle(tmp_path, data), "--db", db, cwd=str(tmp_path))
    err = one_line_error(p, 2, "control character")
    assert "\x1b" not in err and digest(db) == before


def test_flags_have_a_kind_and_keep_their_message():
    """Code asks a flag's kind (store/flags.py) instead of matching the warning's text: NaN comes
    from extra.nan (set where the workload's check() returned nan_flag), noise from the CV; the
    warnings that restate them are not counted twice."""
    from gpuarena.store.flags import FlagKind
    from gpuarena.store.result import Result

    row = make_bundle(1)["results"][0]
    r = Result.model_validate(row | {"extra": {**row["extra"], "nan": True},
                                     "throughput": {**row["throughput"], "cv": 0.074}, "warnings": [
        "output turned to NaN/inf (the article's loss = output.sum())", "throughput spread is high: CV 7.4% > 5%",
        "only 3 samples of throughput (fewer than 5): the interval is wide", "something new"]})
    assert [f.kind for f in r.flags] == [FlagKind.noisy, FlagKind.nan, FlagKind.few_samples, FlagKind.other]
    assert r.flags[0].message == "CV 7.4%" and r.flags[3].message == "something new"


def test_a_refused_database_is_not_checkpointed(tmp_path, cli):
    """A newer gpuarena's database with a WAL not yet checkpointed (its writer died): `run` and `import`
    refuse it, and leave both files as they were (a writable connection's close checkpointed the WAL)."""
    import hashlib

    from gpuarena.store.db import Store

    db = tmp_path / "newer.db"
    Store(str(db)).close()
    writer = ("import os, sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
              "c.execute('PRAGMA journal_mode=WAL'); c.execute('PRAGMA wal_autocheckpoint=0'); "
              "c.execute('PRAGMA user_version = 999'); "
              "c.execute(\"INSERT INTO runs(id, created_at, suite, device, plan) "
              "VALUES ('r', 'now', 's', 'cpu', '[]')\"); os._exit(0)")
    subprocess.run([sys.executable, "-c", writer, str(db)], check=True, timeout=60)
    wal = tmp_path / "newer.db-wal"
    assert wal.exists() and wal.stat().st_size > 0
    def both():
        return hashlib.sha256(db.read_bytes()).hexdigest(), hashlib.sha256(wal.read_bytes()).hexdigest()

    before = both()
    bundle = tmp_path / "b.json"
    bundle.write_text('{"format": "gpuarena-bundle", "version": 1, "environments": [], "results": []}')
    for args in (("run", "-w", "matmul", "--repeats", "1"), ("import", str(bundle))):
        r = cli(*args, "--db", str(db))
        assert r.returncode == 2 and "newer than this gpuarena" in r.stderr, r.stderr
        assert wal.exists() and both() == before


def test_a_full_disk_is_told_as_one(tmp_path):
    """The failing write's own error is said, never the rollback's ("no transaction is active", which
    read as "not a gpuarena database"): store/lock.py's LockTx keeps the first error."""
    import resource

    from gpuarena.store.db import Store
    from tests.procs import gp

    db = tmp_path / "full.db"
    Store(str(db)).close()
    bundle = tmp_path / "b.json"
    bundle.write_text(json.dumps(make_bundle(2000)))
    limit = db.stat().st_size + (96 << 10)

    def small_disk():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    p = gp("import", str(bundle), "--db", str(db), cwd=str(tmp_path), preexec_fn=small_disk)
    assert p.returncode == 2 and "not a gpuarena database" not in p.stderr, p.stderr[-2000:]
    assert "full" in p.stderr or "disk I/O" in p.stderr, p.stderr[-2000:]


def test_three_messages_that_misled(tmp_path, cli):
    """A 0-byte database, GPUARENA_DB with a trailing newline, `export --run latest` (issue 40's re-check)."""
    empty = tmp_path / "empty.db"
    empty.touch()
    r = cli("results", "--db", str(empty))
    assert r.returncode == 2 and "no gpuarena results in" in r.stderr and "not a gpuarena" not in r.stderr, r.stderr
    r = cli("results", env={"GPUARENA_DB": str(tmp_path / "x.db") + "\n"})
    assert r.returncode == 2 and "newline around the path" in r.stderr, r.stderr
    db = str(tmp_path / "g.db")
    bundle = tmp_path / "b.json"
    bundle.write_text(json.dumps(make_bundle(2)))
    assert cli("import", str(bundle), "--db", db).returncode == 0
    r = cli("export", "--run", "latest", "-o", str(tmp_path / "out.json"), "--db", db)
    assert r.returncode == 0 and "exported 2 result(s)" in r.stdout, r.stderr
