"""Shared fixtures.  Tests run on the CPU through the real runner and database.

Two ways to call the command line:
- ``gpuarena(...)`` (fixture ``gp_in``): the real entry point, ``gpuarena.cli.main``, in this process
  through Typer's CliRunner (stdin, stdout, stderr and the environment isolated).  Everything but the
  process boundary: the one-line error, the exit code, what is written.  Use it by default.
- ``run_cli(...)`` / ``tests.procs.gp(...)``: a real ``python -m gpuarena`` process.  Only where the
  process is the point (signals, a crash, resource limits, plugins found at start-up, the console entry).
"""

from __future__ import annotations

import getpass
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One compute thread per process, set before anything imports torch, and inherited by every process a
# test starts.  `make test` runs one pytest worker per core, each worker's runs start processes of their
# own, and torch's default (a thread per core in every process) oversubscribes the cores: OpenMP threads
# that wait for each other spin.  Measured on the 2-core box under load: one tiny ResNet-50 case took
# 13-15 CPU s with 2 threads, 5-6 s with 1.  No test's outcome depends on the thread count.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# torch.compile's inductor compiles in a pool of worker processes (one per core), each importing torch:
# in the case's own process instead.  What is compiled, and what is measured, is the same.
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
# Inductor writes its cache folder into os.environ the first time a test compiles in the worker's own
# process (torch._inductor.runtime.cache_dir_utils.cache_dir); the runner's case server is keyed on the
# environment children import with, so each worker replaced its server once for that.  The same folder
# (torch's default_cache_dir), named from the start.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(
    tempfile.gettempdir(), "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", getpass.getuser())))
# Bytecode is cached (in the __pycache__ folders .gitignore leaves out) even where the shell sets
# PYTHONDONTWRITEBYTECODE: the suite starts a few hundred interpreters (CLI processes, case children,
# torchrun ranks), each of which would otherwise compile every gpuarena module it imports, and each
# pytest worker would rewrite every test module.  Measured: `gpuarena list` 3.9 -> 3.0 CPU s; the plugin
# tests (9, all processes) 54.7 -> 46.5 CPU s.  Nothing a test checks reads bytecode.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def pytest_collection_modifyitems(config, items):
    """The tests that read the session's smoke run go first, in one block: under pytest-xdist
    (`make test`, --dist worksteal) they are the head of the first worker's share, so that worker builds
    the run once and the others never wait for it (xdist_group marks do not group under pytest 9).
    Then the longest tests, shared out between the workers (tests/order.py), so the last tests a
    worker runs are short ones."""
    import torch

    from tests.order import arrange

    wanted = {"smoke_run", "smoke_copy"}
    items[:] = arrange(items, lambda item: bool(wanted & set(getattr(item, "fixturenames", ()))),
                       int(getattr(config, "workerinput", {}).get("workercount", 1)))
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "test.db")


def run_cli(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """The CLI as a user runs it: a real process, real exit code."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.path.join(ROOT, "src") + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.setdefault("OMP_NUM_THREADS", "1")
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "gpuarena", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout)


def gpuarena(*args: str, cwd: str | None = None, env: dict | None = None, input: str | None = None,
             stdin: str | None = None, **_process_only) -> subprocess.CompletedProcess:
    """`gpuarena ARGS` in this process: gpuarena.cli.main under CliRunner's isolation.  Returns what
    a process would (returncode, stdout, stderr), so a test can switch between the two freely.
    What a process would leave behind is put back: working folder, environment, signal handlers,
    open stores.  (``timeout``/``preexec_fn`` are for a real process and ignored here.)"""
    from typer.testing import CliRunner

    from gpuarena.cli import common, main

    env = {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), **(env or {})}
    here, environ = os.getcwd(), dict(os.environ)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    code = 0
    _close_opened(common)
    with CliRunner().isolation(input=input if input is not None else stdin, env=env) as (out, err, *_):
        try:
            if cwd:
                os.chdir(cwd)
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            os.chdir(here)
            _close_opened(common)
            for s, h in handlers.items():
                signal.signal(s, h)
        sys.stdout.flush()
        sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    os.environ.clear()
    os.environ.update(environ)
    return subprocess.CompletedProcess(["gpuarena", *args], code, stdout, stderr)


def _close_opened(common) -> None:
    """What the end of a process does: every store a command opened is closed and forgotten."""
    for store in common.OPENED:
        store.close()
    common.OPENED.clear()


@pytest.fixture
def cli():
    """The CLI in this process (see ``gpuarena``); a test about the process itself uses ``run_cli``."""
    return gpuarena


@pytest.fixture
def suite_file(tmp_path):
    def write(body: str, name: str = "suite.yaml") -> str:
        path = tmp_path / name
        path.write_text(body)
        return str(path)

    return write


@pytest.fixture(scope="session")
def _imported_db(tmp_path_factory) -> str:
    from tests.procs import make_bundle

    home = tmp_path_factory.mktemp("imported")
    bundle = home / "seed.json"
    bundle.write_text(json.dumps(make_bundle(2)))
    p = gpuarena("import", str(bundle), "--db", str(home / "r.db"))
    assert p.returncode == 0, p.stderr
    return str(home / "r.db")


@pytest.fixture
def db(tmp_path, _imported_db) -> str:
    """A database holding two imported results (a bundle of `make_bundle(2)`): imported once per
    session, copied for each test (a test may write to its copy)."""
    path = str(tmp_path / "r.db")
    shutil.copyfile(_imported_db, path)
    return path


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> tuple[str, subprocess.CompletedProcess]:
    """The README's main job, once per `make test`: `gpuarena run` with no suite (the smoke suite: every
    workload at its tiny size on the CPU) with 2 repeats, through the real runner into a real database.
    Tests that only read share it (database path, the run's output); a test that writes copies it.
    Under pytest-xdist the first worker to ask runs it (a file lock in the folder every worker's
    temporary folders share) and the others read the same database and output."""
    from filelock import FileLock

    home = tmp_path_factory.getbasetemp()
    home = home.parent if os.environ.get("PYTEST_XDIST_WORKER") else home
    done = home / "smoke" / "run.json"
    with FileLock(str(home / "smoke.lock")):
        if not done.exists():
            done.parent.mkdir(exist_ok=True)
            db = str(done.parent / "smoke.db")
            p = gpuarena("run", "--db", db, "-q", "--repeats", "2")
            assert p.returncode == 0, p.stderr[-2000:]
            done.write_text(json.dumps({"db": db, "returncode": p.returncode, "stdout": p.stdout,
                                        "stderr": p.stderr}))
    saved = json.loads(done.read_text())
    return saved["db"], subprocess.CompletedProcess(["gpuarena", "run"], saved["returncode"], saved["stdout"],
                                                    saved["stderr"])


@pytest.fixture
def smoke_copy(smoke_run, tmp_path) -> str:
    """A copy of the session's smoke database, for a test that adds its own runs beside it."""
    import sqlite3

    path = str(tmp_path / "smoke-copy.db")
    src, dst = sqlite3.connect(smoke_run[0]), sqlite3.connect(path)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return path
