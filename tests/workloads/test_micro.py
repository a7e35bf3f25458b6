"""matmul, membw, h2d, d2h at tiny size through the runner; fp8 refused on a CPU; share of ceiling."""

from __future__ import annotations

import pytest
import torch

from gpuarena.analysis.rows import ceiling
from gpuarena.analysis.rows.derived import with_derived
from gpuarena.store.db import Store
from gpuarena.workloads import registry
from gpuarena.workloads.base import StepContext
from tests.workloads.conftest import assert_ok, run_entries


def test_micro_and_ceiling_through_runner(db_path):
    results = run_entries(db_path, [
        {"workload": "matmul", "params": {"dtype": "fp32"}},
        {"workload": "membw"},
        {"workload": "h2d", "params": {"pinned": False}},
        {"workload": "d2h"},
        {"workload": "bert-large-infer", "variants": ["fp32"]},
    ])
    for r in results:
        assert "share_of_ceiling" not in r.extra.model_fields_set   # derived when read, never frozen into the record
    mm, bw, h2d, d2h, bert = results = with_derived(results)
    for r in results:
        assert_ok(r)
    # matmul: one item is one 64^3 matmul = 2 * 64^3 FLOP; its precision is its dtype.
    assert mm.unit == "matmuls/s" and mm.precision == "fp32"
    assert mm.flops_per_item == 2 * 64**3
    assert mm.extra.sets >= 2 and mm.extra.shape == [64, 64, 64]
    # The first matmul on a device is its own ceiling.
    assert mm.derived.share_of_ceiling == pytest.approx(1.0)
    # Copies: GB/s, no FLOPs, read + write counted for membw.
    for r in (bw, h2d, d2h):
        assert r.unit == "GB/s" and r.tflops is None and r.derived.share_of_ceiling is None
        assert "share_of_ceiling" not in r.extra.model_fields_set
    assert bw.items_per_step == pytest.approx(2 * 8 * 2**20 / 1e9)
    assert h2d.items_per_step == pytest.approx(8 * 2**20 / 1e9)
    assert any("pinned ignored" in w for w in d2h.all_warnings)  # no CUDA: pinned is meaningless
    # BERT fp32 is measured against the fp32 matmul stored.
    c = bert.derived.ceiling
    assert c["result_id"] == mm.id and c["precision"] == "fp32"
    assert bert.derived.share_of_ceiling == pytest.approx(bert.tflops / mm.tflops)


def test_fp8_needs_a_capable_gpu():
    cls = registry.runnable("matmul")
    p = cls.resolve_params({"dtype": "fp8"}, size="tiny")
    wl = cls(StepContext(device=torch.device("cpu"), variants=frozenset({"seed"}), params=p))
    with pytest.raises(RuntimeError, match="compute capability >= 8.9"):
        wl.setup()
    assert wl.precision() == "fp8" and wl.flops_per_item() == 2 * 64**3  # known without setup


def test_ceiling_ignores_other_devices_precisions_and_sizes(db_path):
    store = Store(db_path)
    run_id = store.create_run("t", "cuda", [], None)

    def mm(dev, prec, tfl, size="full", source="measured"):
        return store.add_result({"run_id": run_id, "case_key": f"{dev}{prec}{tfl}", "workload": "matmul",
                                 "variant": "seed", "params": {"m": 8192, "n": 8192, "k": 8192},
                                 "status": "ok", "device_name": dev, "precision": prec, "tflops": tfl,
                                 "throughput_median": tfl / 1.1e-3,   # an ok row has a throughput (store/result.py)
                                 "size": size, "source": source})

    best = mm("H200", "bf16", 700.0)
    mm("H200", "bf16", 650.0)
    mm("A100", "bf16", 900.0)
    mm("H200", "fp32", 50.0)
    mm("H200", "bf16", 9999.0, size="tiny")
    mm("H200", "bf16", 989.0, source="published")
    from gpuarena.store.rows import validated

    def result(**fields):      # a Result, as analyses receive them
        return validated({"id": 999, "case_key": "k", "variant": "seed", "params": {}, "device_name": "H200",
                          "size": "full", "precision": "bf16", "status": "ok", "throughput_median": 1.0, **fields})

    res = result(workload="bert-large-infer", tflops=350.0)
    pool = store.results()
    fig = ceiling.figures(pool, res)
    assert fig["share_of_ceiling"] == pytest.approx(0.5)
    assert fig["ceiling"]["result_id"] == best
    assert fig["ceiling"]["shape"] == [8192, 8192, 8192]
    default = ceiling.figures(pool, result(workload="bert-large-infer", tflops=350.0,
                                           precision="default"))  # PyTorch default -> the fp32 ceiling
    assert default["share_of_ceiling"] == pytest.approx(7.0)
    assert "fp32" in default["ceiling"]["note"]
    newer = result(workload="matmul", tflops=665.0)
    assert ceiling.figures(pool, newer)["share_of_ceiling"] == pytest.approx(0.95)  # 5% under the best
    failed = result(workload="bert-large-infer", status="oom", throughput_median=None)
    assert ceiling.figures(pool, failed) == {}
    # Read back, a frozen figure from an older record is recomputed against the pool.
    # (derived figures are kept apart: the stored one stays in extra)
    old = result(workload="bert-large-infer", tflops=350.0, extra={"share_of_ceiling": 0.1})
    (again,) = with_derived([old], pool)
    assert again.derived.share_of_ceiling == pytest.approx(0.5) and again.extra.share_of_ceiling == 0.1
