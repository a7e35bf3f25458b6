"""Runs a list of cases, each in its own child process, storing each result as it ends.

A process per case gives each case a clean CUDA context (what the
article's ``empty_cache`` between tests intended) and limits an OOM, a crash or
a hang to one case.  Child processes run in their own process group so a
timeout kills everything they started.  A CPU case's child is forked from the runner's
case server, which imported torch once (runner/zygote.py); a GPU case's child, or any
child with GPUARENA_CHILD_START=spawn, is a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Callable

from gpuarena.identity import PROTOCOL_VERSION
from gpuarena.runner.torchrun import ELSEWHERE
from gpuarena.spec.model import Case
from gpuarena.store.db import Store
from gpuarena.store.figures import check_written
from gpuarena.store.pending import StoreFailed, refused
from gpuarena.store.rows import ResultRefused, validated

STDERR_TAIL = 2000


@dataclass
class CaseOutcome:
    case: Case
    result: dict
    wall_s: float
    refused: str | None = None   # the one line saying why the store refused it, and where it is kept


def _tail(path: str, n: int = STDERR_TAIL) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - n))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def child_env() -> dict:
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast stays off (see README)
    env["PYTHONUNBUFFERED"] = "1"
    env["GPUARENA_RUNNER_PID"] = str(os.getpid())  # the child's watchdog ends it if we die
    return env


def kill_group(proc) -> None:
    """proc: a subprocess.Popen or a case child forked from the case server (runner/zygote.py)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


CHILD = "gpuarena.runner.child"


def _start(cmd: list[str], out, err, out_path: str, err_path: str, device: str = "cpu"):
    """The case child: forked from this runner's case server (runner/zygote.py) when cmd is the
    plain child command of a CPU case and the server is available, else cmd in a fresh process
    leading its own session.  GPU cases never use the server: on the H200 (torch 2.11, CUDA 13)
    importing torch starts 16 threads and maps libcuda, no state to fork from (session 9)."""
    from gpuarena.runner import zygote

    env = child_env()
    if cmd[:3] == [sys.executable, "-m", CHILD] and device.split(":")[0] == "cpu":
        proc = zygote.start(cmd[3:], out_path, err_path, env)
        if proc is not None:
            return proc
    return subprocess.Popen(cmd, stdout=out, stderr=err, env=env, start_new_session=True)


def run_command(cmd: list[str], case: Case, workdir: str, result_path: str) -> dict:
    """Start cmd in its own session, enforce the case's time limit, read its result file
    (a timeout, a signal or an exit without one is stored as timeout, crashed or oom)."""
    err_path = os.path.join(workdir, "stderr.txt")
    out_path = os.path.join(workdir, "stdout.txt")
    with open(err_path, "wb") as err, open(out_path, "wb") as out:
        proc = _start(cmd, out, err, out_path, err_path, case.device)
        try:
            rc = proc.wait(timeout=case.timeout_s)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            return {"status": "timeout", "error": f"killed after the {case.timeout_s:g} s time limit",
                    "extra": {"stderr_tail": _tail(err_path)}}
        except BaseException:  # Ctrl-C or SIGTERM in the parent: take the child down with us
            kill_group(proc)
            raise
        # The child may have left grandchildren (compile workers); end them with the group.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if os.path.exists(result_path):
        with open(result_path) as f:
            result = json.load(f)
        if rc != 0 and result.get("status") == "ok":
            # The result file is the process's last act (a child writes it on its way out; under
            # torchrun rank 0 writes it once every rank's measurement is gathered), so a non-zero
            # exit after it is teardown: gloo closing its connections while a peer still reads,
            # now and then, aborts that peer.  The measurement is complete; it says so.
            result.setdefault("warnings", []).append(
                f"the process exited with code {rc} after writing its result (teardown); "
                "the measurement is complete, the stderr tail is kept")
            result.setdefault("extra", {})["stderr_tail"] = _tail(err_path)
        return result
    tail = _tail(err_path)
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = str(-rc)
        why = f"killed by signal {name}"
    else:
        why = f"exited with code {rc} before writing a result"
    why = getattr(proc, "lost", None) or why
    last = [ln for ln in tail.strip().splitlines() if ln.strip()]
    status = "oom" if any(m in tail for m in ("OutOfMemoryError", "CUDA out of memory")) else "crashed"
    return {"status": status, "error": why + (f": {last[-1][:300]}" if last else ""),
            "extra": {"stderr_tail": tail}}


def run_case(case: Case) -> dict:
    """Measure one case in a fresh child process (or N ranks through torchrun); with
    case.processes > 1, in that many fresh processes one after another, pooled (runner/pool.py)."""
    from gpuarena.runner.pool import merge
    from gpuarena.workloads import registry

    wl = registry.runnable(case.workload)   # the body: its fingerprint is the code_hash
    results = []
    for _ in range(case.processes):
        results.append(_run_process(case, wl))
        if results[-1].get("status") != "ok":
            break
    base = identity(case, wl)
    base.update(merge(results))
    return base


def identity(case: Case, wl) -> dict:
    """The one skeleton of a result: what the case and its workload class say before anything is measured."""
    return {"workload": case.workload, "variant": case.variant, "params": case.params,
            "size": case.size, "gpus": case.gpus, "device": case.device,
            "workload_version": wl.version, "code_hash": wl.code_hash(), "unit": wl.unit_name(case.params),
            "warnings": [], "extra": {}}


def _sweep_group(case: Case) -> str:
    """A max sweep's cases differ only in the swept parameter."""
    rest = {k: v for k, v in case.params.items() if k != case.sweep}
    return json.dumps([case.workload, case.variant, rest, case.size, case.gpus], sort_keys=True, default=str)


def sweep_stop(case: Case, oom_at: dict[str, int]) -> dict | None:
    """The stored answer for a sweep case past the batch that ran out of memory (not run)."""
    from gpuarena.workloads import registry

    if not case.sweep or _sweep_group(case) not in oom_at or case.params[case.sweep] <= oom_at[_sweep_group(case)]:
        return None
    out = identity(case, registry.runnable(case.workload))
    out.update(status="skipped", error=f"{case.sweep}={case.params[case.sweep]} not run: "
                                       f"{case.sweep}={oom_at[_sweep_group(case)]} already ran out of memory")
    return out


TMP_PREFIX = "gpuarena-"


def clean_stale_workdirs() -> int:
    """Remove the case folders of runners that died without cleaning up (SIGKILL, a lost
    terminal): each is named gpuarena-<runner pid>-..., so a folder whose runner is gone goes."""
    import re
    import shutil

    import psutil

    removed = 0
    root = tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return 0
    for name in names:
        m = re.fullmatch(TMP_PREFIX + r"(\d+)-\w+", name)
        if not m or psutil.pid_exists(int(m.group(1))):
            continue
        path = os.path.join(root, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
    return removed


def _run_process(case: Case, wl) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"{TMP_PREFIX}{os.getpid()}-") as workdir:
        case_path = os.path.join(workdir, "case.json")
        result_path = os.path.join(workdir, "result.json")
        with open(case_path, "w") as f:
            json.dump(case.model_dump(), f)
        if wl.launcher == "torchrun":
            from gpuarena.runner import torchrun

            cmd = torchrun.command(case, case_path, result_path)
        else:
            cmd = [sys.executable, "-m", CHILD, case_path, result_path]
        return run_command(cmd, case, workdir, result_path)


def execute(store: Store, run_id: str, cases: list[Case], env_id: int | None, device_name: str,
            on_start: Callable[[int, Case], None] | None = None,
            on_done: Callable[[int, CaseOutcome], None] | None = None) -> list[CaseOutcome]:
    """Run cases in order; each result is committed to the store the moment it ends."""
    outcomes = []
    oom_at: dict[str, int] = {}    # a max sweep's group -> the smallest value that ran out of memory
    for i, case in enumerate(cases):
        if on_start:
            on_start(i, case)
        t0 = time.perf_counter()
        result = sweep_stop(case, oom_at) or run_case(case)
        if result.get("status") == ELSEWHERE:   # a multi-node case: node 0 stores it, not this node
            outcome = CaseOutcome(case, result, time.perf_counter() - t0)
            outcomes.append(outcome)
            if on_done:
                on_done(i, outcome)
            continue
        if case.sweep and result.get("status") == "oom":
            group = _sweep_group(case)
            oom_at[group] = min(oom_at.get(group, case.params[case.sweep]), case.params[case.sweep])
        result.update({"run_id": run_id, "case_key": case.key, "env_id": env_id,
                       "device_name": device_name, "source": "measured"})
        result["extra"] = dict(result.get("extra") or {}, wall_s=time.perf_counter() - t0,
                               protocol=PROTOCOL_VERSION)
        note = None
        try:
            check_figures(case, result)
            store.add_result(result)
        except ResultRefused as exc:   # check_storable refuses what it can foresee; this is the rest
            note = refused(store, run_id, case, result, str(exc))
        except (sqlite3.DatabaseError, OSError) as exc:
            # a full or failing disk, a store locked or a server silent past its timeout: keep the measurement
            raise StoreFailed(store, run_id, case, result, exc) from None
        outcome = CaseOutcome(case, result, time.perf_counter() - t0, note)
        outcomes.append(outcome)
        if on_done:
            on_done(i, outcome)
    return outcomes


def check_figures(case: Case, result: dict) -> None:
    """A new result's figures against the model its workload declares (store/figures.py):
    ResultRefused naming the figure, for a wrong type or a key the model does not declare."""
    from gpuarena.workloads import registry

    try:
        model = registry.get(case.workload).figures_for(dict(case.params))
        check_written(case.workload, model, result.get("extra") or {})
    except ValueError as exc:
        raise ResultRefused(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - a plugin's model that fails otherwise refuses its result, no more
        raise ResultRefused(f"{case.workload}'s figures model failed ({type(exc).__name__})") from None


def check_storable(cases: list[Case], run_id: str, device_name: str) -> None:
    """Refuse, before anything is measured, a case whose result the store could not keep (a
    name or a parameter the stored Result does not allow): one line naming the case and why."""
    from gpuarena.errors import UserError
    from gpuarena.workloads import registry

    for case in cases:
        row = identity(case, registry.runnable(case.workload))
        row.update(run_id=run_id, case_key=case.key, device_name=device_name, source="measured",
                   status="skipped")
        try:
            validated(row)
        except ResultRefused as exc:
            raise UserError(f"{case.label()[:200]}: its result could not be stored ({exc}); "
                            "nothing was measured") from None
