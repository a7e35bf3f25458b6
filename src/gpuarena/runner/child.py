"""Entry point of the child process that runs one case.

    python -m gpuarena.runner.child CASE.json RESULT.json

(or, by default, :func:`main` with those arguments in a child forked from the runner's
case server: runner/zygote.py; the same watchdog, the same code.)

The parent reads RESULT.json; if the child dies before writing it (a signal, a
driver error), the parent stores the case as ``crashed`` with the stderr tail.

The child runs in its own session (so a timeout can kill its whole group), which
also means nothing kills it when the runner itself dies (SIGKILL, OOM killer, a
pre-empted job).  A watchdog thread therefore ends the child's process group
once the runner (GPUARENA_RUNNER_PID) is gone: no case outlives its runner.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading

from gpuarena.runner.measure_case import measure
from gpuarena.spec.model import Case


def write_atomic(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, default=str)
    os.replace(tmp, path)


WATCH_INTERVAL_S = 0.25


def _runner_alive(proc) -> bool:
    import psutil

    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def watch_runner(pid: int | None = None, interval: float = WATCH_INTERVAL_S) -> threading.Thread | None:
    """Kill our process group when the runner that started us dies.

    psutil's Process remembers the creation time, so a recycled pid does not
    count as the runner; a zombie runner (killed, not yet reaped) counts as dead.
    """
    import psutil

    pid = pid or int(os.environ.get("GPUARENA_RUNNER_PID") or 0)
    if not pid:
        return None
    try:
        runner = psutil.Process(pid)
    except psutil.Error:
        runner = None

    def loop():
        while runner is not None and _runner_alive(runner):
            threading.Event().wait(interval)
        # Our group is the one the runner created (start_new_session: the group
        # leads its own session); anything else (a hand-run child) kills only itself.
        if os.getpgrp() == os.getsid(0):
            os.killpg(os.getpgrp(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)

    t = threading.Thread(target=loop, name="gpuarena-runner-watchdog", daemon=True)
    t.start()
    return t


def main(argv: list[str]) -> int:
    case_path, result_path = argv[1], argv[2]
    watch_runner()
    with open(case_path) as f:
        case = Case(**json.load(f))
    # One line naming the case, so a crash's stderr tail says what was running.
    print(f"gpuarena child {os.getpid()}: {case.label()} on {case.device}", file=sys.stderr, flush=True)
    result = measure(case)
    write_atomic(result_path, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
