"""whatif: a prediction at N GPUs does not depend on which other GPU counts were asked for, and it does not
carry one node's NVLink beyond one node."""

from __future__ import annotations

import os

import pytest

from gpuarena.analysis import whatif
from gpuarena.store.bundle import import_bundle
from gpuarena.store.db import Store

X2 = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "data", "h200-x2-2026-11-29.json")


@pytest.fixture(scope="module")
def x2(tmp_path_factory):
    """The shipped two-H200 bundle: ddp-train at 1 and 2 GPUs in one run, and its all-reduce curve."""
    s = Store(str(tmp_path_factory.mktemp("x2") / "x2.db"))
    import_bundle(s, X2)
    yield s
    s.close()


@pytest.mark.parametrize("model", ["resnet50", "bert-large"])
def test_the_measured_overlap_does_not_depend_on_the_counts_asked_for(x2, model):
    """The overlap is measured at 2 GPUs.  `--n 8` alone found no modelled all-reduce at 2 among the counts
    asked for and fell back to no overlap: BERT-Large's 8-GPU step was 136.2 ms with `--n 8` and 132.6 ms
    with `--n 2,4,8`, the same question answered two ways."""
    both = whatif.predict("ddp-train", "H200", [2, 8], x2, model=model)
    alone = whatif.predict("ddp-train", "H200", [8], x2, model=model)
    assert both["overlap"] > 0 and "measured ddp-train" in both["overlap_from"]
    assert alone["overlap"] == pytest.approx(both["overlap"])
    assert alone["overlap_from"] == both["overlap_from"]
    assert alone["rows"][0]["step_s"] == pytest.approx(both["rows"][1]["step_s"])
