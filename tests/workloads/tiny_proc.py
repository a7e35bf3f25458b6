"""`gpuarena serve-tiny` in a child process on a free port, for endpoint-serve's tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading

from tests.conftest import ROOT


@contextlib.contextmanager
def serving(args: list[str], env: dict | None = None):
    """Start serve-tiny with extra ``args``; yield its base URL; stop it."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), OMP_NUM_THREADS="1", **(env or {}))
    proc = subprocess.Popen([sys.executable, "-m", "gpuarena", "serve-tiny", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(600)   # start-up on a loaded machine; a hang guard only
    try:
        assert line and "listening on http://" in line[0], line
        yield line[0].split("listening on ")[1].split()[0]
    finally:
        proc.terminate()
        proc.wait(30)


def in_process(params: dict, env: dict | None = None):
    """The workload itself without the runner (cheaper than a child process): setup and its first step."""
    import torch

    from gpuarena.workloads import registry
    from gpuarena.workloads.base import StepContext

    cls = registry.runnable("endpoint-serve")
    wl = cls(StepContext(device=torch.device("cpu"), variants=frozenset({"seed"}),
                         params=cls.resolve_params(params, size="tiny")))
    old = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        wl.setup()
        wl.step()
        return wl
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
