"""Case children forked from the case server (runner/zygote.py) keep every promise a fresh
interpreter kept: the same stored fields as GPUARENA_CHILD_START=spawn, a hang killed at its
limit with everything it started, a crash stored with its signal or exit code, and nothing
outliving a runner that dies.  The workloads are a plugin written here (tests/workloads/plugins.py)."""

from __future__ import annotations

import json
import os
import signal

import psutil

from gpuarena.store.db import Store
from tests.procs import TINY as PROCS_TINY
from tests.procs import ROOT, alive, case_children, gp, gp_batch, one_line_error, start_runner, wait_for
from tests.workloads.plugins import install

BODY = '''
    import json
    import os
    import signal
    import subprocess
    import sys


    def note(**kw):
        """Where this case ran: its process's name, its parent, the grandchild it started."""
        with open(os.environ["ZYG_NOTE"], "a") as f:
            comm = open("/proc/self/comm").read().strip()
            f.write(json.dumps(dict(pid=os.getpid(), ppid=os.getppid(), comm=comm, **kw)) + "\\n")


    class Where(Base):
        name = "zyg-where"

        def setup(self):
            super().setup()
            note()


    class Hang(Base):
        name = "zyg-hang"

        def setup(self):
            super().setup()
            kid = subprocess.Popen(["sleep", "600"])
            note(grandchild=kid.pid)
            print("zyg hang: set up", flush=True)

        def step(self):
            time.sleep(600)


    class Segv(Base):
        name = "zyg-segv"

        def step(self):
            os.kill(os.getpid(), signal.SIGSEGV)


    class Exit(Base):
        name = "zyg-exit"

        def step(self):
            print("zyg exit: leaving with code 3", file=sys.stderr, flush=True)
            os._exit(3)
'''
ENTRIES = {"zyg-where": "Where", "zyg-hang": "Hang", "zyg-segv": "Segv", "zyg-exit": "Exit"}
TINY = ("--device", "cpu", "--set", "size=tiny", "--set", "repeats=2", "--set", "steps=2", "--set", "warmup=0")


def _env(tmp_path, **extra) -> dict:
    site = tmp_path / "site"
    env = install(site, BODY, ENTRIES, package="zyg_plugin") if not site.exists() else \
        {"PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), str(site)])}
    return {**env, "ZYG_NOTE": str(tmp_path / "note.jsonl"), **extra}


def _notes(tmp_path) -> list[dict]:
    path = tmp_path / "note.jsonl"
    return [json.loads(ln) for ln in path.read_text().splitlines()] if path.exists() else []


def _run(tmp_path, db: str, *args: str, **env):
    method = () if "--suite" in args else TINY
    p = gp("run", "-q", "--db", db, *args, *method, cwd=str(tmp_path), env=_env(tmp_path, **env))
    assert "case server is unavailable" not in p.stderr, p.stderr
    return p


def _same_shape(a, b) -> None:
    """Two results of one case measured twice: the same fields, the same facts, only figures differ."""
    assert a.model_fields_set == b.model_fields_set
    assert a.extra.model_fields_set == b.extra.model_fields_set
    for k in ("workload", "variant", "params", "size", "gpus", "device", "device_name", "workload_version",
              "code_hash", "unit", "status", "error", "items_per_step", "flops_per_item", "precision",
              "energy_source", "peak_memory_bytes"):
        assert getattr(a, k) == getattr(b, k), k
    assert len(a.samples) == len(b.samples)
    assert a.throughput.model_fields_set == b.throughput.model_fields_set


SAME = "name: same\n" + PROCS_TINY + """entries:
  - workload: resnet50-train
    grid: {batch_size: [2, 3]}
  - workload: zyg-where
"""


def test_server_and_spawn_store_the_same_fields(tmp_path, suite_file):
    """The second ResNet case is forked after the server imported torchvision (learned from the first)."""
    db_server, db_spawn = str(tmp_path / "server.db"), str(tmp_path / "spawn.db")
    args = ("run", "-q", "--suite", suite_file(SAME))
    # both runs in one new interpreter that finds the plugin (tests.procs.gp_batch), the second with spawn
    server, spawn = gp_batch((*args, "--db", db_server), (*args, "--db", db_spawn, {"GPUARENA_CHILD_START": "spawn"}),
                             cwd=str(tmp_path), env=_env(tmp_path))
    for p in (server, spawn):
        assert p.returncode == 0 and "case server is unavailable" not in p.stderr, p.stderr
    # the default forks the case from the server (a child of the runner); spawn starts an interpreter
    [forked, fresh] = _notes(tmp_path)
    assert forked["comm"] == "gpuarena-case"
    assert fresh["comm"] != "gpuarena-case"
    a, b = Store(db_server), Store(db_spawn)
    rows_a, rows_b = a.results(), b.results()
    names = ["resnet50-train", "resnet50-train", "zyg-where"]
    assert [r.workload for r in rows_a] == [r.workload for r in rows_b] == names
    for ra, rb in zip(rows_a, rows_b):
        assert ra.status == "ok", ra.error
        _same_shape(ra, rb)
    # the environment is the runner's, whichever way its children start
    env_a, env_b = a.environment(rows_a[0].env_id), b.environment(rows_b[0].env_id)
    assert env_a.keys() == env_b.keys()


FAULTS = "name: faults\n" + PROCS_TINY + """entries:
  - workload: zyg-segv
  - workload: zyg-exit
  - workload: zyg-hang
    method: {timeout_s: 5}
  - workload: zyg-where
"""


def test_a_signal_an_exit_and_a_hang_each_end_their_case_and_the_next_runs(tmp_path, suite_file):
    """One run (one runner, one case server) for the three ways a forked case ends badly, then one that
    ends well: a signal or an exit is stored crashed with its signal or code; a hang is killed at its limit
    with everything it started; the server forks the next case as before."""
    db = str(tmp_path / "f.db")
    p = _run(tmp_path, db, "--suite", suite_file(FAULTS), "--device", "cpu")
    assert p.returncode == 0, p.stderr
    segv, exit3, hang, where = Store(db).results()
    assert segv.status == "crashed" and segv.error.startswith("killed by signal SIGSEGV"), segv.error
    assert exit3.status == "crashed", exit3.error
    assert exit3.error.startswith("exited with code 3 before writing a result"), exit3.error
    assert "zyg exit: leaving with code 3" in exit3.error   # the stderr's last line
    assert hang.status == "timeout" and hang.error == "killed after the 5 s time limit"
    assert where.status == "ok", where.error   # the server forks the next case as before
    notes = _notes(tmp_path)
    assert notes[-1]["comm"] == "gpuarena-case"   # zyg-where's
    # The hang set up (on any machine it does within its 5 s) and started a grandchild: the
    # limit killed both.  (A case killed before its setup left nothing behind to check.)
    for n in notes[:-1]:
        assert n["comm"] == "gpuarena-case" and "zyg-hang" in hang.extra.stderr_tail
        assert "zyg hang: set up" not in hang.extra.stderr_tail   # stdout is its own file
        assert not alive([q for q in (_proc(n["pid"]), _proc(n["grandchild"])) if q]), n


def _proc(pid: int):
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None


def test_a_dying_runner_ends_its_server_and_the_case_it_forked(tmp_path):
    db = str(tmp_path / "d.db")
    runner = start_runner("run", "-q", "--db", db, "-w", "zyg-hang", *TINY, cwd=str(tmp_path),
                          env=_env(tmp_path))
    me = psutil.Process(runner.pid)
    try:
        wait_for(lambda: any("grandchild" in n for n in _notes(tmp_path)), 300, "the case to set up")
        [child] = case_children(me)
        assert child.name() == "gpuarena-case"
        server = child.parent()
        assert server.parent().pid == runner.pid and "gpuarena.runner.zygote_server" in server.cmdline()
        grandchild = psutil.Process(_notes(tmp_path)[0]["grandchild"])
    finally:
        runner.kill()   # SIGKILL, as the OOM killer ends a runner
        runner.wait()
    assert runner.returncode == -signal.SIGKILL
    # the child's watchdog polls every 0.25 s; the wait is a hang guard sized for a loaded machine
    _, left = psutil.wait_procs([child, grandchild, server], timeout=120)
    assert not alive(left), [(p.pid, p.name()) for p in left]


def test_an_unknown_start_mode_is_refused_before_anything_runs(tmp_path):
    db = str(tmp_path / "u.db")
    p = gp("run", "-q", "--db", db, "-w", "matmul", *TINY, cwd=str(tmp_path),
           env={"GPUARENA_CHILD_START": "fork"})
    one_line_error(p, says="GPUARENA_CHILD_START='fork'")
    assert not os.path.exists(db)


def test_a_server_that_cannot_fork_safely_falls_back_with_one_warning(tmp_path):
    """An interpreter whose site hook starts a thread (a profiler agent does) must not fork: the
    server refuses, the runner says so once and starts every case as a fresh interpreter."""
    site = tmp_path / "agent"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import threading, time\nthreading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\n")
    db = str(tmp_path / "w.db")
    p = gp("run", "-q", "--db", db, "-w", "matmul", "--set", "m=64,96", *TINY, cwd=str(tmp_path),
           env={"PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), str(site)])})
    assert p.returncode == 0, p.stderr
    warned = [ln for ln in p.stderr.splitlines() if "case server is unavailable" in ln]
    assert len(warned) == 1 and "thread" in warned[0], p.stderr
    assert [r.status for r in Store(db).results()] == ["ok", "ok"]


def test_a_gpu_case_starts_a_fresh_interpreter(tmp_path):
    """A GPU case never forks from the server (a CUDA torch's import leaves threads behind): its
    child is the plain ``python -m gpuarena.runner.child`` process, on this CPU machine too."""
    import subprocess
    import sys

    from gpuarena.runner import executor, zygote

    before = dict(zygote.STARTED)
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    cmd = [sys.executable, "-m", executor.CHILD, str(tmp_path / "no-case.json"), str(tmp_path / "r.json")]
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = executor._start(cmd, o, e, str(out), str(err), device="cuda:0")
        rc = proc.wait(timeout=600)
    assert isinstance(proc, subprocess.Popen) and proc.args == cmd
    assert zygote.STARTED == before          # no server started, no child forked
    assert rc != 0 and "no-case.json" in err.read_text()    # the real child ran, and refused the missing case
