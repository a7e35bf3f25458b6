"""The case server's process (runner/zygote.py starts it): ``python -m gpuarena.runner.zygote_server FD``.

It imports torch and gpuarena's measuring modules and says it is ready on the socket FD.
For each request it imports what the request adds (what an earlier child imported that
the server lacked), checks that it is still safe to fork (one thread, CUDA not
initialised, NVML not loaded) and forks a case child.  It answers the child's pid once
the child leads its own session, and the child's wait status when it ends.  It ignores
SIGINT (the runner decides what a Ctrl-C ends) and exits when the runner closes the socket.
"""

from __future__ import annotations

import atexit
import importlib
import os
import select
import signal
import socket
import sys
import threading
import traceback

from gpuarena.runner.zygote import CASE_NAME, PRELOAD, _Lines, _send

_wake: tuple[int, int] | None = None   # the SIGCHLD wake-up pipe
_live: set[int] = set()                # the case children not yet reaped


def _import(names) -> None:
    for name in names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - a module that will not import is the case's to find out
            pass


def unsafe() -> str | None:
    """Why forking now could hand a child state it must not share, or None."""
    threads = len(os.listdir("/proc/self/task"))
    if threads > 1 or threading.active_count() > 1:
        return f"an import started a thread ({threads} threads)"
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return "an import initialised CUDA"
    with open("/proc/self/maps") as f:
        if any("libnvidia-ml.so" in line for line in f):
            return "an import loaded NVML"
    return None


def serve(fd: int) -> None:
    global _wake
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=fd)
    lines = _Lines(sock)
    _import(PRELOAD)
    reason = unsafe()
    _send(sock, {"refused": reason} if reason else {"ready": True, "pid": os.getpid()})
    if reason:
        return
    _wake = os.pipe()
    for end in _wake:
        os.set_blocking(end, False)
    signal.set_wakeup_fd(_wake[1])
    signal.signal(signal.SIGCHLD, lambda *_: None)
    while True:
        ready, _, _ = select.select([sock, _wake[0]], [], [])
        if _wake[0] in ready:
            _drain()
            _reap(sock)
        if sock in ready:
            req = lines.recv(None)
            if req is None:   # the runner is gone (or done): so are we, and any case still running
                for pid in _live:
                    _kill_group(pid)
                os._exit(0)   # nothing to flush; a torch interpreter's teardown takes ~1 s
            if not _fork(sock, req):
                return


def _drain() -> None:
    try:
        while os.read(_wake[0], 4096):
            pass
    except BlockingIOError:
        pass


def _reap(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _live.discard(pid)
        try:
            _send(sock, {"pid": pid, "status": status})
        except OSError:
            pass


def _fork(sock: socket.socket, req: dict) -> bool:
    """Fork one case child; False when it is no longer safe to (the runner starts a fresh server)."""
    _import(req["preload"])
    reason = unsafe()
    if reason:
        _send(sock, {"refused": reason})
        return False
    sys.stdout.flush()
    sys.stderr.flush()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _child(sock, req, w)   # never returns
    _live.add(pid)
    os.close(w)
    os.read(r, 1)   # the child leads its own session now (or died trying): its group can be killed
    os.close(r)
    _send(sock, {"pid": pid})
    return True


def _kill_group(pid: int) -> None:
    for kill, target in ((os.killpg, pid), (os.kill, pid)):   # its group; itself, if it had none yet
        try:
            kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _child(sock: socket.socket, req: dict, ready: int) -> None:
    """In the forked child: become what ``python -m gpuarena.runner.child CASE RESULT`` is, run it, exit."""
    code: int | str | None = 1
    interrupted = False
    try:
        code = _become(sock, req, ready)
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        traceback.print_exc()
        interrupted = True
    except BaseException:  # noqa: BLE001 - what the interpreter does with an uncaught exception
        traceback.print_exc()
        code = 1
    _exit(code, interrupted)


def _become(sock: socket.socket, req: dict, ready: int) -> int:
    before = set(sys.modules)
    sock.close()
    signal.set_wakeup_fd(-1)
    for end in _wake:
        os.close(end)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.setsid()
    _set_name(CASE_NAME)
    for target, path in ((1, req["out"]), (2, req["err"])):
        f = os.open(path, os.O_WRONLY | os.O_APPEND)
        os.dup2(f, target)
        os.close(f)
    os.write(ready, b"1")
    os.close(ready)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    if "numpy" in sys.modules:   # a fresh interpreter seeds numpy's global generator from the OS
        sys.modules["numpy"].random.seed()
    from gpuarena.runner import child

    sys.argv = [child.__file__, *req["argv"]]
    try:
        return child.main(sys.argv)
    finally:
        _write_learned(req["learn"], before)


def _write_learned(path: str, before: set[str]) -> None:
    """The modules this child imported that the server lacked, the outermost of each tree."""
    new = {n for n in set(sys.modules) - before
           if not n.startswith("__") and getattr(sys.modules.get(n), "__spec__", None) is not None}
    roots = sorted(n for n in new if n.rpartition(".")[0] not in new)
    try:
        with open(path, "w") as f:
            f.write("".join(n + "\n" for n in roots))
    except OSError:
        pass


def _set_name(name: bytes) -> None:
    try:
        import ctypes

        ctypes.CDLL(None).prctl(15, ctypes.c_char_p(name), 0, 0, 0)   # PR_SET_NAME
    except (OSError, AttributeError):
        pass


def _exit(code, interrupted: bool) -> None:
    """What the interpreter does on its way out: wait for threads, atexit, flush; then end."""
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - exiting regardless
        pass
    if interrupted:   # an uncaught Ctrl-C ends a Python process by SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
