"""MFU is computed when a result is read (analysis/rows/mfu.py), never frozen into the record; the LLM
analyses read the decoder's shapes and formulas without torch."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gpuarena.analysis.rows.mfu import mfu, mfu_vs_bf16
from gpuarena.data import catalog
from gpuarena.store import bundle
from gpuarena.store.rows import validated

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Session 5's H200 bundle: llm-train records written when the workload froze extra.mfu at write time.
S5 = os.path.join(ROOT, "docs", "data", "h200-s5-2026-11-30.json")


def test_old_records_read_the_same_mfu_they_froze():
    rows = [r.row() for r in bundle.read(S5).results]
    trains = [r for r in rows if r["workload"] == "llm-train" and r["status"] == "ok"]
    assert len(trains) >= 6 and {r["precision"] for r in trains} == {"bf16", "fp8"}
    for d in trains:
        r = validated({**d, "id": 1})
        assert mfu(r) == pytest.approx(d["extra"]["mfu"], rel=1e-12)
        assert mfu_vs_bf16(r) == pytest.approx(d["extra"]["mfu_vs_bf16_peak"], rel=1e-12)


def test_a_frozen_figure_is_not_what_is_read():
    peak = catalog.find("NVIDIA H200").peak("bf16")
    r = {"workload": "llm-train", "status": "ok", "precision": "bf16", "gpus": 2, "device_name": "NVIDIA H200",
         "variant": "bf16", "id": 1, "case_key": "k", "throughput_median": 1e4, "tflops": 2 * 0.5 * peak, "params": {},
         "extra": {"mfu": 0.9}}
    assert mfu(validated(r)) == pytest.approx(0.5)
    assert mfu(validated({**r, "device_name": "cpu"})) is None and mfu(validated({**r, "tflops": None})) is None


ANALYSES = ("gpuarena.analysis.physics.llm_plan", "gpuarena.analysis.physics.serving_model",
            "gpuarena.analysis.verbs.serving", "gpuarena.analysis.physics.llm_claims",
            "gpuarena.analysis.physics.llm_advice", "gpuarena.analysis.rows.mfu",
            "gpuarena.workloads.llm.shapes", "gpuarena.workloads.llm.flops", "gpuarena.workloads.llm.layout",
            "gpuarena.workloads.llm.fp8")


def test_llm_analyses_import_without_torch():
    code = ("import sys\n"
            + "".join(f"import {m}\n" for m in ANALYSES)
            + "from gpuarena.workloads.llm.shapes import SHAPES\n"
            + "from gpuarena.analysis.physics import llm_plan\n"
            + "llm_plan.plan('llama3-8b', 1e9, 'H100 80GB SXM5', 8, 0.4)\n"
            + "print('torch' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    # timeout: a hang guard only (a loaded machine takes far longer than an idle one to import torch)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "False"
