"""A small stored set of results, written through the Store API (stored
results, not measurements): two A100s and an A800 with realistic repeats."""

from __future__ import annotations

import os

import pytest

from gpuarena.measure.stats import summarize
from gpuarena.store.db import Store

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "data")


@pytest.fixture(scope="module")
def everything(tmp_path_factory):
    """Every shipped H200 bundle in docs/data and the shipped published results, in one store."""
    import glob

    from gpuarena.analysis.rows.published import load_into
    from gpuarena.store import bundle

    s = Store(str(tmp_path_factory.mktemp("all") / "all.db"))
    for f in sorted(glob.glob(os.path.join(DOCS, "*.json"))):
        bundle.import_bundle(s, f)
    load_into(s)
    yield s
    s.close()


def result(device_name: str, bs: int, per_step_s: list[float], code_hash: str = "abc123", variant: str = "seed",
           **kw) -> dict:
    thr = [bs / s for s in per_step_s]
    t = summarize(thr, "images/s")
    fpi = 3 * 2 * 4.089e9
    d = {"case_key": f"resnet50-train|{variant}|{bs}|{device_name}", "source": "measured",
         "workload": "resnet50-train", "workload_version": 1, "code_hash": code_hash, "variant": variant,
         "params": {"batch_size": bs, "image_size": 224, "lr": 0.1, "compile_mode": "default"}, "size": "full",
         "gpus": 1, "device": "cuda", "device_name": device_name, "status": "ok", "unit": "images/s",
         "precision": "default", "throughput_median": t.median, "throughput": t.to_dict(),
         "latency": summarize(per_step_s, "s/step").to_dict(), "samples": per_step_s, "items_per_step": bs,
         "flops_per_item": fpi, "tflops": t.median * fpi / 1e12, "warnings": [], "extra": {}}
    d.update(kw)
    return d


def fill(store: Store) -> None:
    a100 = "NVIDIA A100-SXM4-40GB"
    a800 = "NVIDIA A800-SXM4-40GB"
    # batch 256: A800 clearly slower (~0.88x); batch 64: the two overlap (no significant difference).
    store.add_result(result(a100, 256, [0.1062, 0.1060, 0.1065, 0.1063, 0.1061, 0.1064]))
    store.add_result(result(a800, 256, [0.1210, 0.1208, 0.1213, 0.1211, 0.1209, 0.1212],
                            power_w_mean=350.0, energy_j_per_item=0.1655, energy_source="nvml-energy"))
    store.add_result(result(a100, 64, [0.0280, 0.0340, 0.0285, 0.0335, 0.0310, 0.0300]))
    store.add_result(result(a800, 64, [0.0310, 0.0295, 0.0335, 0.0300, 0.0325, 0.0315], throttled=True,
                            extra={"throttle_reasons": ["sw_power_cap"]},
                            warnings=["GPU throttled during the timed window: sw_power_cap"]))
    # A redefined workload (its version bumped): its results must not be compared.  A different
    # code_hash alone (provenance) does not stop a comparison.
    store.add_result(result("NVIDIA H100 80GB HBM3", 256, [0.05, 0.0501, 0.0502, 0.0499, 0.05], code_hash="ffff00",
                            workload_version=2))


@pytest.fixture
def store(tmp_path):
    s = Store(str(tmp_path / "a.db"))
    fill(s)
    yield s
    s.close()


def golden(name: str, text: str) -> None:
    """Compare with tests/analysis/golden/<name>; GOLDEN_UPDATE=1 rewrites it."""
    path = os.path.join(GOLDEN, name)
    if os.environ.get("GOLDEN_UPDATE") or not os.path.exists(path):
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        assert text == f.read(), f"{name} differs from the golden file (GOLDEN_UPDATE=1 to accept)"
