"""The share of the measured matmul ceiling is taken at the precision the recipe executed, the rule
`check` and the share of peak use (issue 24: one share of peak)."""

from __future__ import annotations

import pytest

from gpuarena.analysis.rows import ceiling
from gpuarena.store.db import Store
from gpuarena.store.rows import validated


def test_default_precision_convolutions_meet_the_tf32_ceiling(tmp_path):
    """H200, session 8: ResNet-50's seed at PyTorch's default precision ran at 60.8 TFLOP/s, 120% of the
    FP32 matmul (cuDNN runs its convolutions in TF32 by default); BERT-Large's default matmuls are FP32."""
    store = Store(str(tmp_path / "c.db"))
    run_id = store.create_run("c", "cuda", [], None)
    for prec, tfl in (("fp32", 50.6), ("tf32", 400.0)):
        store.add_result({"run_id": run_id, "case_key": prec, "workload": "matmul", "variant": "seed",
                          "params": {"m": 8192, "n": 8192, "k": 8192}, "status": "ok", "precision": prec,
                          "device_name": "NVIDIA H200", "tflops": tfl, "throughput_median": tfl / 1.1e-3})
    pool = store.results()

    def result(workload, tflops):
        return validated({"id": 99, "run_id": run_id, "case_key": workload, "workload": workload, "variant": "seed",
                          "params": {}, "device_name": "NVIDIA H200", "precision": "default", "status": "ok",
                          "tflops": tflops, "throughput_median": 1000.0})

    resnet = ceiling.figures(pool, result("resnet50-infer", 60.8))
    assert resnet["ceiling"]["precision"] == "tf32" and resnet["share_of_ceiling"] == pytest.approx(60.8 / 400)
    assert "executed at tf32" in resnet["ceiling"]["note"]
    bert = ceiling.figures(pool, result("bert-large-infer", 40.0))
    assert bert["ceiling"]["precision"] == "fp32" and bert["share_of_ceiling"] == pytest.approx(40 / 50.6)
    # a card the catalog does not know keeps the stored precision's ceiling
    assert ceiling.ceiling_dtype(validated({**result("resnet50-infer", 1.0).row(), "device_name": "cpu"})) == "fp32"
