"""Shared fixtures.  Tests run on the CPU through the real runner and database."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pytest_collection_modifyitems(config, items):
    import torch

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
    full_env.setdefault("OMP_NUM_THREADS", "2")
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "gpuarena", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout)


@pytest.fixture
def cli():
    return run_cli
