"""Helpers for the fault-injection tests: start a real `gpuarena run`, watch its
child processes, read the database the way a second process would."""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
import time

import psutil
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Tiny cases: 32x32 images, two timed repeats of two steps (about a second each
# on 2 cores, plus ~3 s of torch import in each child).
TINY = "method: {size: tiny, repeats: 2, steps: 2, warmup: 0}\n"


def cli_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMP_NUM_THREADS", "2")
    env.update(extra or {})
    return env


def _no_core_dumps():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a SIGSEGV in a test leaves no core file


def start_runner(*args: str, cwd: str, env: dict | None = None) -> subprocess.Popen:
    """`gpuarena ARGS` as a real background process (its children inherit no core dumps)."""
    return subprocess.Popen([sys.executable, "-m", "gpuarena", *args], cwd=cwd, env=cli_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_no_core_dumps)


def count(db: str, sql: str = "SELECT COUNT(*) FROM results", args: tuple = ()) -> int:
    """A read from a separate connection, as another process would see it (0 before the schema exists)."""
    if not os.path.exists(db):
        return 0
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute(sql, args).fetchone()[0]
    except sqlite3.OperationalError:  # no tables yet
        return 0
    finally:
        conn.close()


def case_children(runner: psutil.Process) -> list[psutil.Process]:
    """The runner's descendants that are measuring a case."""
    out = []
    try:
        kids = runner.children(recursive=True)
    except psutil.Error:
        return out
    for p in kids:
        try:
            if "gpuarena.runner.child" in " ".join(p.cmdline()):
                out.append(p)
        except psutil.Error:
            continue
    return out


def case_of(child: psutil.Process) -> dict | None:
    """The case a child is measuring (it reads it from the case.json named on its command line)."""
    try:
        path = child.cmdline()[-2]
        with open(path) as f:
            return json.load(f)
    except (psutil.Error, OSError, IndexError, ValueError):
        return None


def child_stderr(child: psutil.Process) -> str:
    try:
        with open(os.path.join(os.path.dirname(child.cmdline()[-2]), "stderr.txt")) as f:
            return f.read()
    except (psutil.Error, OSError, IndexError):
        return ""


def wait_for(pred, timeout: float, what: str, interval: float = 0.1):
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        value = pred()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.Error:
            continue
    return out


@pytest.fixture
def suite_file(tmp_path):
    def write(body: str, name: str = "suite.yaml") -> str:
        path = tmp_path / name
        path.write_text(body)
        return str(path)

    return write
