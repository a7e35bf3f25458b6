"""Issue 18, the runner and the command line: concurrent --resume, a full disk
mid-run, SIGHUP, stale case folders, a failing after-run report, environment
variables, --resume options and plans, claims and what-ifs with absurd
numbers, escape codes, and the last-resort handler.  Real runs of tiny cases."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import tempfile

import psutil
import pytest

from tests.conftest import gpuarena
from tests.procs import TINY_RUN, case_children, digest, gp, one_line_error, start_runner, wait_for

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")


def _q(db: str, sql: str, args: tuple = ()):
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def _planned_run(db: str, sizes: tuple[int, ...] = (64, 65, 66), status: str = "interrupted") -> str:
    """A run planned (as `gpuarena run` plans it) with nothing measured yet."""
    import sys

    sys.path.insert(0, SRC)
    from gpuarena.spec.model import Method, expand
    from gpuarena.spec.suite import adhoc_suite
    from gpuarena.store.db import Store

    cases = expand(adhoc_suite(["matmul"], []), "cpu", Method(size="tiny", repeats=2, steps=2, warmup=0),
                   {"m": [str(s) for s in sizes]})
    store = Store(db)
    run_id = store.create_run("adhoc", "cpu", [c.model_dump() for c in cases], None)
    store.release_run(run_id, status)
    store.close()
    return run_id


# --- item 8: one process measures a run at a time ------------------------------------------------------

def test_two_resumes_at_once_measure_each_case_once(tmp_path):
    db = str(tmp_path / "r.db")
    run_id = _planned_run(db)
    first = start_runner("run", "--resume", run_id, "--db", db, "-q", cwd=str(tmp_path))
    try:
        wait_for(lambda: _q(db, "SELECT owner FROM runs WHERE id=?", (run_id,))[0][0], 300, "the run's owner")
        second = gpuarena("run", "--resume", run_id, "--db", db, "-q", cwd=str(tmp_path))
        one_line_error(second, 2, "is being measured by process")
        out, err = first.communicate(timeout=300)
        assert first.returncode == 0, err[-2000:]
    finally:
        if first.poll() is None:
            first.kill()
    assert _q(db, "SELECT COUNT(*) FROM results WHERE run_id=?", (run_id,))[0][0] == 3
    assert _q(db, "SELECT status, owner FROM runs WHERE id=?", (run_id,))[0] == ("complete", None)


def test_resume_after_a_killed_owner_takes_the_run(tmp_path):
    db = str(tmp_path / "r.db")
    run_id = _planned_run(db, (64,), status="running")
    dead = json.dumps({"pid": 2**22 - 7, "host": os.uname().nodename, "started": 1.0})
    conn = sqlite3.connect(db)
    conn.execute("UPDATE runs SET owner=? WHERE id=?", (dead, run_id))
    conn.commit()
    conn.close()
    p = gpuarena("run", "--resume", run_id, "--db", db, "-q", cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr[-2000:]
    assert _q(db, "SELECT COUNT(*) FROM results")[0][0] == 1


# --- item 10: a full disk keeps the measured case for --resume ----------------------------------------

def test_full_disk_keeps_the_measurement_for_resume(tmp_path):
    """RLIMIT_FSIZE makes every write past the limit fail with EFBIG, as a full disk fails it."""
    db = str(tmp_path / "r.db")
    assert gpuarena(*TINY_RUN, "--db", db, cwd=str(tmp_path)).returncode == 0
    kept = None
    # The WAL grows by pages from empty: a limit must fall between the run's row and its result.  The
    # result is made large (1000 repeats: ~25 kB of samples), so the window is wide: from SQLite's
    # 32 KiB WAL index (below it no write gets through) to past 56 KiB (measured: every limit from 32 to
    # 56 KiB kept it).  Several limits are tried, for a filesystem where SQLite's writes land otherwise.
    for kib in range(32, 96, 8):
        def limit(kib=kib):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_FSIZE, (kib * 1024, kib * 1024))

        p = gp(*TINY_RUN, "--set", "m=72", "--set", "repeats=1000", "--db", db, cwd=str(tmp_path),
               preexec_fn=limit)
        assert p.returncode in (0, 2) and "Traceback" not in p.stderr, p.stderr[-2000:]
        if "is kept in" in p.stderr:
            kept = p
            break
    if kept is None:   # every limit failed before the run row or let the result through: nothing to test
        pytest.skip("no file-size limit fell between the run's row and its result on this filesystem")
    err_lines = [ln for ln in kept.stderr.splitlines() if ln.startswith("gpuarena: error")]
    assert len(err_lines) == 1 and "--resume" in err_lines[0]
    path = err_lines[0].split("is kept in ")[1].split(";")[0]
    run_id = err_lines[0].split("--resume ")[1].split("`")[0]
    assert os.path.isfile(path)
    assert _q(db, "SELECT COUNT(*) FROM results WHERE run_id=?", (run_id,))[0][0] == 0
    p = gpuarena("run", "--resume", run_id, "--db", db, "-q", cwd=str(tmp_path))
    assert p.returncode == 0 and "kept from an earlier full disk" in p.stderr, p.stderr[-2000:]
    assert "0 case(s)" in p.stderr  # stored from the file, not measured again
    assert _q(db, "SELECT COUNT(*) FROM results WHERE run_id=?", (run_id,))[0][0] == 1
    assert not os.path.exists(path)


# --- item 32: SIGHUP, and case folders a killed runner left ------------------------------------------

def _dead_pid() -> int:
    pid = 2**22 - 11
    while psutil.pid_exists(pid):
        pid -= 1
    return pid


def _ended(runner) -> bool:
    """The runner has exited (the wait stops at once instead of running out its time)."""
    return runner.poll() is not None


def test_sighup_marks_the_run_interrupted_and_stale_folders_go(tmp_path):
    stale = tempfile.mkdtemp(prefix=f"gpuarena-{_dead_pid()}-")
    db = str(tmp_path / "r.db")
    # 64 cases: a forked tiny case can live under 0.1 s, so a run of four could end between two looks
    # on an idle machine; this one is still running when the signal comes
    runner = start_runner(*TINY_RUN, "--set", "m=" + ",".join(str(m) for m in range(64, 128)), "--db", db,
                          cwd=str(tmp_path))
    try:
        proc = psutil.Process(runner.pid)
        wait_for(lambda: case_children(proc) or _ended(runner), 300, "a case process")
        assert runner.poll() is None, "the run ended before a case process was seen"
        assert not os.path.exists(stale)  # cleaned when the run started
        mine = [n for n in os.listdir(tempfile.gettempdir()) if n.startswith(f"gpuarena-{runner.pid}-")]
        assert mine
        runner.send_signal(signal.SIGHUP)
        runner.communicate(timeout=300)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 130
    assert _q(db, "SELECT status FROM runs")[0][0] == "interrupted"
    assert not [n for n in os.listdir(tempfile.gettempdir()) if n.startswith(f"gpuarena-{runner.pid}-")]


# --- item 33: the run stored everything; the after-run report fails ---------------------------------

def test_failing_after_run_report_is_a_warning(tmp_path):
    db = str(tmp_path / "r.db")
    (tmp_path / "reports").write_text("a file where the reports folder would go")
    p = gpuarena(*TINY_RUN, "--db", db, cwd=str(tmp_path))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert "warning" in p.stderr or "no report" in p.stderr
    assert _q(db, "SELECT COUNT(*) FROM results WHERE status='ok'")[0][0] == 1
    assert _q(db, "SELECT status FROM runs")[0][0] == "complete"


# --- items 34, 36: environment variables checked before a run is written ----------------------------

@pytest.mark.parametrize("env,says", [
    ({"GPUARENA_MEMORY_CAP_MB": "abc"}, "GPUARENA_MEMORY_CAP_MB"),
    ({"GPUARENA_MEMORY_CAP_MB": "-5"}, "GPUARENA_MEMORY_CAP_MB"),
    ({"GPUARENA_TORCHRUN_ARGS": "--max-restarts=9"}, "GPUARENA_TORCHRUN_ARGS"),
    ({"GPUARENA_TORCHRUN_ARGS": "--nnodes 'unclosed"}, "GPUARENA_TORCHRUN_ARGS"),
], ids=["cap-abc", "cap-negative", "torchrun-option", "torchrun-quote"])
def test_bad_environment_refused_before_the_run(tmp_path, env, says):
    db = str(tmp_path / "r.db")
    p = gpuarena(*TINY_RUN, "--db", db, cwd=str(tmp_path), env=env)
    one_line_error(p, 2, says)
    assert not os.path.exists(db)


# --- items 35, 37: --resume -----------------------------------------------------------------------------

@pytest.mark.parametrize("extra", [("--set", "batch_size=-1"), ("--repeats", "0"), ("--device", "tpu"),
                                   ("-w", "matmul")], ids=["set", "repeats", "device", "workload"])
def test_resume_refuses_options_it_cannot_honour(tmp_path, extra):
    db = str(tmp_path / "r.db")
    run_id = _planned_run(db, (64,))
    before = digest(db)
    p = gpuarena("run", "--resume", run_id, *extra, "--db", db, cwd=str(tmp_path))
    one_line_error(p, 2, "--resume")
    assert digest(db) == before


def test_resume_of_a_plan_with_an_unknown_field(tmp_path):
    db = str(tmp_path / "r.db")
    run_id = _planned_run(db, (64,))
    plan = json.loads(_q(db, "SELECT plan FROM runs")[0][0])
    plan[0]["affinity"] = "numa0"  # as a newer gpuarena might write
    conn = sqlite3.connect(db)
    conn.execute("UPDATE runs SET plan=?", (json.dumps(plan),))
    conn.commit()
    conn.close()
    before = digest(db)
    p = gpuarena("run", "--resume", run_id, "--db", db, cwd=str(tmp_path))
    one_line_error(p, 2, "plan cannot be read")
    assert digest(db) == before


# --- item 13: equal values after reading name one case ----------------------------------------------------

def test_duplicate_values_after_normalising_refused(tmp_path):
    db = str(tmp_path / "r.db")
    p = gpuarena(*TINY_RUN, "--set", "m=64,064,64", "--db", db, cwd=str(tmp_path))
    one_line_error(p, 2, "appears twice")
    assert not os.path.exists(db)


# --- items 23, 24: escape codes never reach the terminal ----------------------------------------------

def test_suite_name_with_escape_codes_refused(tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text('name: "evil\\e[2J\\e]0;owned\\a"\nentries:\n  - workload: matmul\n')
    p = gpuarena("run", "--suite", str(suite), "--db", str(tmp_path / "r.db"), cwd=str(tmp_path))
    err = one_line_error(p, 2, "name")
    assert "\x1b" not in err and "\x07" not in err and not os.path.exists(tmp_path / "r.db")


def test_escape_codes_stripped_from_error_lines_and_stored_rows_skipped(tmp_path):
    from tests.procs import make_bundle

    db = str(tmp_path / "r.db")
    (tmp_path / "b.json").write_text(json.dumps(make_bundle(2)))
    assert gpuarena("import", str(tmp_path / "b.json"), "--db", db, cwd=str(tmp_path)).returncode == 0
    conn = sqlite3.connect(db)  # a row an older gpuarena accepted
    conn.execute("UPDATE results SET device_name = 'NVIDIA \x1b[2J\x1b]0;pwned\x07' WHERE id = 2")
    conn.commit()
    conn.close()
    p = gpuarena("compare", "-b", "\x1b[31mH200\x1b[0m", "--db", db, cwd=str(tmp_path))
    assert p.returncode == 2 and "\x1b" not in p.stderr and p.stderr.count("\n") <= 2, p.stderr
    p = gpuarena("results", "-f", "csv", "--db", db, cwd=str(tmp_path))
    assert p.returncode == 0 and "\x1b" not in p.stdout and "\x1b" not in p.stderr
    assert "skipped 1 stored result" in p.stderr


# --- items 25, 26, 27, 30: claims and what-ifs with impossible inputs --------------------------------

CLAIM = ("check", "--gpu", "H100 SXM", "--batch-size", "256")


@pytest.mark.parametrize("argv,says", [
    (CLAIM + ("-w", "resnet50-train", "--precision", "fp64", "--throughput", "100"), "precision"),
    (CLAIM + ("-w", "ddp-train", "--precision", "bf16", "--throughput", "100"), "multi-GPU"),
    (CLAIM + ("-w", "resnet50-train", "--precision", "bf16", "--throughput", "1e308", "-f", "json"), "throughput"),
    (CLAIM + ("-w", "resnet50-train", "--precision", "bf16", "--throughput", "nan"), "throughput"),
    (("whatif", "-w", "resnet50-train", "--gpu", "H100 SXM", "--throughput", "nan"), "--throughput"),
    (("whatif", "-w", "resnet50-train", "--gpu", "H100 SXM", "--throughput", "inf"), "--throughput"),
    (("whatif", "-w", "resnet50-train", "--gpu", "H100 SXM", "--throughput", "900", "--batch-size", "-5"),
     "--batch-size"),
    (("whatif", "-w", "resnet50-train", "--gpu", "H100 SXM", "--throughput", "900", "--batch-size", "0"),
     "--batch-size"),
], ids=["fp64", "ddp-train", "1e308", "nan-claim", "whatif-nan", "whatif-inf", "whatif-bs-neg", "whatif-bs-0"])
def test_impossible_numbers_refused(tmp_path, argv, says):
    p = gpuarena(*argv, cwd=str(tmp_path))   # no database in tmp_path: claims judged without one
    one_line_error(p, 2, says)
    assert "Infinity" not in p.stdout and "NaN" not in p.stdout


# --- the last resort: an unexpected exception is one line, exit 1; --debug shows it ------------------

def test_unexpected_exception_is_one_line_with_a_hint(monkeypatch, capsys):
    from gpuarena.cli import main
    from gpuarena.workloads import registry

    def broken():
        raise RuntimeError("boom")

    monkeypatch.setattr(registry, "names", broken)
    with pytest.raises(SystemExit) as exc:
        main(["list"])
    err = capsys.readouterr().err
    assert exc.value.code == 1 and err.count("\n") == 1 and "boom" in err and "--debug" in err
    with pytest.raises(RuntimeError, match="boom"):
        main(["--debug", "list"])


# --- item 12: a path parameter is checked before the run is created -----------------------------------

@pytest.mark.parametrize("value", ["../../etc", "/nonexistent/sd15"])
def test_path_parameter_checked_before_the_run(tmp_path, value):
    db = str(tmp_path / "r.db")
    p = gpuarena("run", "-w", "sd15-generate", "--set", "size=tiny", "--set", f"weights={value}", "--db", db,
           cwd=str(tmp_path))
    one_line_error(p, 2, "not a local diffusers checkout")
    assert not os.path.exists(db)
