"""Case children forked from a server that has already imported torch (a "zygote").

A fresh ``python -m gpuarena.runner.child`` pays torch's import (~2.5 CPU s) and a
ResNet case torchvision's (which imports torch._dynamo, ~2.5 CPU s more) before it
measures anything.  The first case a runner measures starts one server process
(``python -m gpuarena.runner.zygote_server FD``, runner/zygote_server.py) that imports torch and gpuarena's measuring
modules once; every case child is then a fork of it and runs child.main as before:
its own session (a time limit kills its whole group), stdout/stderr in the case's
files, the runner's child environment, the runner watchdog.  The server never runs
a tensor operation: it refuses to fork (and the runner starts a fresh one, or falls
back to fresh interpreters) once it has more than one thread, an initialised CUDA or
NVML loaded, so no child inherits a CUDA context, an OpenMP pool or a process group.

Modules a child imported that the server lacks (torchvision for a ResNet case) are
imported by the server before the next case, so only a run's first such case pays them
(not under GPUARENA_MEMORY_CAP_MB: what a case imports counts against its cap, as before).
The server ends when its runner does (the socket closes); a child it started is ended
by the child's own watchdog.

GPUARENA_CHILD_START=spawn starts every case in a fresh interpreter, as before; a server
that cannot start falls back to that with one warning line.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

START_ENV = "GPUARENA_CHILD_START"
START_MODES = ("server", "spawn")
PRELOAD = ("torch", "gpuarena.runner.child")
START_LIMIT_S = 600          # a hang guard on the server's imports (a loaded machine's torch import ~100 s)
CASE_NAME = b"gpuarena-case"  # the children's process name (ps, pgrep -x gpuarena-case)
LEARNED = "imports.txt"       # in the case's folder: the modules the child imported that the server lacked

STARTED = {"server": 0, "forked": 0}   # counts for this runner process (measuring aids)


def import_env(env: dict) -> dict:
    """The part of a child's environment that importing can read: a server started with another
    one is replaced.  gpuarena's own variables are read when a case runs (the child gets the
    whole environment of its case), and pytest's PYTEST_CURRENT_TEST changes with every test."""
    return {k: v for k, v in env.items() if not k.startswith("GPUARENA_") and k != "PYTEST_CURRENT_TEST"}


class Unavailable(Exception):
    """The server could not start or refused to fork."""


def _send(sock: socket.socket, msg: dict) -> None:
    sock.sendall(json.dumps(msg).encode() + b"\n")


class _Lines:
    """Newline-delimited JSON messages from a socket, with a deadline."""

    def __init__(self, sock: socket.socket):
        self.sock, self.buf = sock, b""

    def recv(self, deadline: float | None) -> dict | None:
        """The next message; None when the peer closed; TimeoutError past the deadline."""
        while b"\n" not in self.buf:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                raise TimeoutError from None
            except OSError:
                data = b""
            if not data:
                return None
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)


# --- the runner's side ---------------------------------------------------------------

class Server:
    """One server process, started with one environment; cases are asked for one at a time."""

    def __init__(self, env: dict):
        self.key = import_env(env)
        mine, theirs = socket.socketpair()
        self.sock, self.lines = mine, _Lines(mine)
        self.imported = set(PRELOAD)
        self.wanted: set[str] = set()   # what its children imported that it lacks
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gpuarena.runner.zygote_server", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        theirs.close()
        STARTED["server"] += 1
        try:
            msg = self.lines.recv(time.monotonic() + START_LIMIT_S)
        except TimeoutError:
            msg = {"refused": f"its imports took over {START_LIMIT_S} s"}
        if not msg or "ready" not in msg:
            self.close()
            raise Unavailable((msg or {}).get("refused") or f"it exited with code {self.proc.poll()}")

    def start(self, argv: list[str], out: str, err: str, env: dict) -> Child:
        """Fork a case child running child.main(argv); Unavailable if the server refuses (then
        the modules it was asked to import first are never asked for again)."""
        # Under GPUARENA_MEMORY_CAP_MB a CPU case's cap is address space on top of what it had
        # mapped when the cap was set; a child imports what it needs itself, as a fresh one does.
        wanted = set() if env.get("GPUARENA_MEMORY_CAP_MB", "").strip() else self.wanted
        req = {"argv": argv, "out": out, "err": err, "cwd": os.getcwd(), "env": env,
               "preload": sorted(wanted - self.imported - _refused),
               "learn": os.path.join(os.path.dirname(err), LEARNED)}
        try:
            _send(self.sock, req)
            msg = self.lines.recv(time.monotonic() + START_LIMIT_S)
        except (OSError, TimeoutError):
            msg = None
        if not msg or "pid" not in msg:
            _refused.update(req["preload"])
            self.close()
            raise Unavailable((msg or {}).get("refused") or "it ended")
        self.imported |= set(req["preload"])
        STARTED["forked"] += 1
        return Child(self, msg["pid"], req["learn"])

    def learn(self, path: str) -> None:
        try:
            with open(path) as f:
                self.wanted.update(ln.strip() for ln in f if ln.strip())
        except OSError:
            pass

    def close(self) -> None:
        self.sock.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Child:
    """A forked case child, waited for as subprocess.Popen is (pid, wait, returncode)."""

    def __init__(self, server: Server, pid: int, learn: str):
        self.server, self.pid, self.learn = server, pid, learn
        self.returncode: int | None = None
        self.lost: str | None = None   # why no exit status came back (the server ended)

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is not None:
            return self.returncode
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                msg = self.server.lines.recv(deadline)
            except TimeoutError:
                raise subprocess.TimeoutExpired(f"case child {self.pid}", timeout) from None
            if msg is None:   # the server is gone: the child cannot be waited for, so it is ended
                self.lost = f"the case server (pid {self.server.proc.pid}) ended while the case ran"
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                _forget(self.server)
                self.returncode = -signal.SIGKILL
                return self.returncode
            if msg.get("pid") == self.pid and "status" in msg:
                self.returncode = os.waitstatus_to_exitcode(msg["status"])
                self.server.learn(self.learn)
                return self.returncode


_server: Server | None = None
_refused: set[str] = set()    # modules after whose import a server refused to fork
_spawn_only = False           # the server could not start: fresh interpreters from now on
_lock = threading.Lock()
_ended_at_exit: list = []


def _forget(server: Server) -> None:
    global _server
    if _server is server:
        _server = None
    server.close()


def start(argv: list[str], out: str, err: str, env: dict) -> Child | None:
    """A case child forked from this runner's server (started on first use, restarted when the
    environment an import could read changes); None when cases start as fresh interpreters (GPUARENA_CHILD_START=spawn,
    or the server could not start: said once, in one warning line)."""
    global _server, _spawn_only
    if os.environ.get(START_ENV, "").strip() == "spawn" or _spawn_only or not hasattr(os, "fork"):
        return None
    why = ""
    with _lock:
        for _ in range(2):   # refused after importing what a child needed: once more, fresh
            try:
                if _server is not None and (_server.key != import_env(env) or _server.proc.poll() is not None):
                    _forget(_server)
                if _server is None:
                    _server = Server(env)
                    if not _ended_at_exit:   # waited for at exit: its CPU time counts as ours
                        _ended_at_exit.append(atexit.register(shutdown))
                return _server.start(argv, out, err, env)
            except (Unavailable, OSError) as exc:   # OSError: no socket or process to be had
                why = str(exc)
                if _server is None:   # a fresh server refused
                    break
                _forget(_server)
            except BaseException:   # Ctrl-C while it forks: without the runner the server ends the child
                if _server is not None:
                    _forget(_server)
                raise
        _spawn_only = True
        print(f"gpuarena: warning: the case server is unavailable ({why[:200]}); "
              f"each case starts a fresh interpreter", file=sys.stderr)
        return None


def shutdown() -> None:
    """End this runner's server (it also ends by itself when the runner exits)."""
    with _lock:
        if _server is not None:
            _forget(_server)
