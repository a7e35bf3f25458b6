"""Helpers for the tests that need a real `gpuarena` process (fault injection, signals, exit codes):
start one, watch its child processes, read the database the way a second process would."""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
import time

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Tiny cases: 32x32 images, two timed repeats of two steps (about a second each
# on 2 cores, plus ~3 s of torch import in each child).
TINY = "method: {size: tiny, repeats: 2, steps: 2, warmup: 0}\n"


def cli_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMP_NUM_THREADS", "1")
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


def _is_case(p: psutil.Process) -> bool:
    # a fresh interpreter (GPUARENA_CHILD_START=spawn) or a fork of the case server (runner/zygote.py)
    return p.name() == "gpuarena-case" or "gpuarena.runner.child" in " ".join(p.cmdline())


def case_children(runner: psutil.Process) -> list[psutil.Process]:
    """The runner's descendants that are measuring a case."""
    out = []
    try:
        kids = runner.children(recursive=True)
    except psutil.Error:
        return out
    for p in kids:
        try:
            if _is_case(p):
                out.append(p)
        except psutil.Error:
            continue
    return out


def case_dir(child: psutil.Process) -> str | None:
    """The case's folder: where the child's stderr goes (case.json, stderr.txt, result.json)."""
    try:
        for f in child.open_files():
            if f.path.endswith(os.sep + "stderr.txt"):
                return os.path.dirname(f.path)
    except psutil.Error:
        pass
    return None


def case_of(child: psutil.Process) -> dict | None:
    """The case a child is measuring (its case.json)."""
    try:
        with open(os.path.join(case_dir(child) or "", "case.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def child_stderr(child: psutil.Process) -> str:
    try:
        with open(os.path.join(case_dir(child) or "", "stderr.txt")) as f:
            return f.read()
    except OSError:
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


# `gpuarena run` of one tiny matmul case (a few seconds, most of it torch's import)
TINY_RUN = ("run", "-w", "matmul", "--set", "size=tiny", "--set", "repeats=2", "--set", "steps=2",
            "--set", "warmup=0", "-q")


def gp(*args: str, cwd: str, env: dict | None = None, timeout: float = 600, preexec_fn=None,
       stdin: str | None = None) -> subprocess.CompletedProcess:
    """`gpuarena ARGS` as a user runs it: a real process, its exit code, stdout and stderr."""
    return subprocess.run([sys.executable, "-m", "gpuarena", *args], cwd=cwd, env=cli_env(env),
                          capture_output=True, text=True, timeout=timeout, input=stdin,
                          preexec_fn=preexec_fn or _no_core_dumps)


_BATCH = """
import json, sys
sys.path.insert(1, sys.argv[3])
from tests.conftest import gpuarena
commands, out, done = json.loads(sys.argv[1]), sys.argv[2], []
for a, e in commands:
    sys.argv = ["gpuarena", *a]     # the command line a process of its own has (runs.argv, the redaction)
    p = gpuarena(*a, env=e)
    done.append([p.returncode, p.stdout, p.stderr])
with open(out, "w") as f:
    json.dump(done, f)
"""


def gp_batch(*commands: tuple, cwd: str, env: dict | None = None,
             timeout: float = 600) -> list[subprocess.CompletedProcess]:
    """Several `gpuarena` commands in ONE fresh interpreter, one after another, each through the real
    entry point (``tests.conftest.gpuarena``: its own exit code, stdout, stderr, environment).  For a
    test whose point is what a new process finds at start-up (a plugin on its path), not a process per
    verb: each `gpuarena` process pays torch's import (~3 CPU s).  A warning a process prints once (a
    plugin left out) is in the first command's stderr.  A command's last item may be a dict: environment
    variables for that command alone.  Each command sees its own command line in sys.argv, as its own
    process would (the run stores it; a password in it is masked in what is said)."""
    commands = tuple((c[:-1], c[-1]) if c and isinstance(c[-1], dict) else (c, None) for c in commands)
    out = os.path.join(cwd, f"batch-{os.getpid()}-{time.monotonic_ns()}.json")
    p = subprocess.run([sys.executable, "-c", _BATCH, json.dumps(commands), out, ROOT], cwd=cwd,
                       env=cli_env(env), capture_output=True, text=True, timeout=timeout,
                       preexec_fn=_no_core_dumps)
    assert p.returncode == 0 and os.path.exists(out), (p.returncode, p.stderr[-3000:])
    with open(out) as f:
        done = json.load(f)
    os.unlink(out)
    return [subprocess.CompletedProcess(["gpuarena", *args], code, stdout, stderr)
            for (args, _), (code, stdout, stderr) in zip(commands, done)]


def one_line_error(p: subprocess.CompletedProcess, code: int = 2, says: str = "") -> str:
    """Assert the refusal shape: exit code, exactly one line on stderr, no traceback."""
    err = p.stderr
    assert p.returncode == code, (p.returncode, err[-2000:], p.stdout[-500:])
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
    assert says in err, err
    return err


def digest(*paths: str) -> dict:
    """Bytes of each path that exists (a database and its WAL): compare before and after.
    The -shm index and an empty -wal hold no data (a WAL reader may create them)."""
    import hashlib

    out = {}
    for p in paths:
        for q in (p, p + "-wal", p + "-journal"):
            if os.path.exists(q) and not (q.endswith("-wal") and os.path.getsize(q) == 0):
                with open(q, "rb") as f:
                    out[q] = hashlib.sha256(f.read()).hexdigest()
    return out


def make_bundle(n: int, run_id: str = "20260101-000000-abcdef") -> dict:
    """A valid bundle of n ok results (the shape `gpuarena export` writes)."""
    results = []
    for i in range(1, n + 1):
        results.append({
            "id": i, "run_id": run_id, "case_key": f"key-{i}", "source": "measured", "workload": "matmul",
            "workload_version": 1, "code_hash": "0123abcd", "variant": "seed",
            "params": {"m": 64, "n": 64, "k": 64, "dtype": "bf16"}, "size": "tiny", "gpus": 1,
            "device": "cuda", "device_name": "NVIDIA H200", "env_id": 1, "status": "ok", "unit": "matmuls/s",
            "throughput_median": 1000.0 + i, "throughput": {"n": 2, "median": 1000.0 + i, "mean": 1000.0 + i},
            "samples": [0.001, 0.001], "warnings": [], "extra": {}, "created_at": "2026-01-01T00:00:00+00:00"})
    return {"format": "gpuarena-bundle", "version": 1, "created_at": "2026-01-01T00:00:00+00:00",
            "environments": [{"id": 1, "hash": "abc123", "fingerprint": {"gpu": "NVIDIA H200"}}],
            "results": results}


def many_results(n: int) -> dict:
    """A bundle of n varied results: three GPUs, matmuls with a FLOP rate (so every row asks for
    its ceiling) and 2-rank results (so every such row asks for its scaling baseline)."""
    b = make_bundle(n)
    gpus = ["NVIDIA H200", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"]
    for i, r in enumerate(b["results"]):
        r.update(params={"m": 64 + i % 7, "n": 64, "k": 64, "dtype": "bf16"}, device_name=gpus[i % 3],
                 precision="bf16", tflops=1.0 + i % 13, run_id=f"20260101-000000-{i % 50:06d}")
        if i % 4 == 3:
            r.update(workload="resnet50-train", unit="images/s", gpus=2, extra={"world_size": 2},
                     params={"batch_size": 64}, precision="bf16")
    return b
