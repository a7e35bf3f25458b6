"""Runs workloads through the real runner (one child process per case) into a real database."""

from __future__ import annotations

import os

import pytest

from gpuarena.runner.executor import execute
from gpuarena.spec.model import Entry, Method, Suite, expand
from gpuarena.store.db import Store
from gpuarena.store.result import Result


def run_entries(db_path: str, entries: list[dict], repeats: int = 2, device_name: str = "test-cpu",
                env: dict | None = None) -> list[Result]:
    """Measure the entries at tiny size on the CPU; return the stored results, in order."""
    suite = Suite(name="test", method=Method(size="tiny", repeats=repeats),
                  entries=[Entry(**e) for e in entries])
    cases = expand(suite, "cpu")
    old = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        store = Store(db_path)
        run_id = store.create_run("test", "cpu", [c.model_dump() for c in cases], None)
        execute(store, run_id, cases, None, device_name)
        return store.results(run_ids=[run_id])
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def static_libstdcxx_gxx(folder) -> str:
    """A ``g++`` whose links put libstdc++ inside the library, as the H200 machine's compiler did."""
    import shutil

    from gpuarena.workloads.resnet50_infer.deploy import linking_gxx

    real = shutil.which("g++")
    if not real:   # conditional: the AOTInductor rung itself needs a C++ compiler (deploy.aot_ready)
        pytest.skip("no g++ on this machine")
    return linking_gxx(os.path.join(str(folder), "static-gcc"), real, "-static-libstdc++")


def assert_ok(r: Result) -> None:
    """The checks every measured result must pass."""
    assert r.status == "ok", (r.workload, r.variant, r.error, r.extra.traceback)
    assert r.throughput_median > 0
    assert len(r.samples) == r.throughput.n
    if r.flops_per_item:
        want = r.throughput_median * r.flops_per_item / 1e12
        assert r.tflops == pytest.approx(want, rel=1e-9)


@pytest.fixture(autouse=True)
def _one_thread(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")   # as tests/conftest.py sets it for the session
