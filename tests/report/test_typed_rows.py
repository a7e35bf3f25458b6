"""The typed Result is what flows from the store to the report (issue 24, items 1-2): Store.results
returns frozen Results, derived figures stay apart from stored ones, the report reads the
results table once, flags have kinds, and analysis/report read extra by attribute."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from gpuarena.store.db import Store
from gpuarena.store.flags import FlagKind, as_flag, nan_flag
from gpuarena.store.result import Result

SRC = Path(__file__).parents[2] / "src" / "gpuarena"


def test_the_store_returns_frozen_typed_results(report_db):
    store = Store(report_db, readonly=True)
    rows = store.results()
    assert rows and all(isinstance(r, Result) for r in rows)
    r = rows[0]
    assert r.throughput.median == r.throughput_median and r.extra.nan is None
    with pytest.raises(ValidationError):
        r.workload = "x"
    assert store.results(workload=r.workload)[0] is r     # read and validated once, shared (frozen)


def test_derived_figures_are_kept_apart_from_stored_ones(report_db):
    from gpuarena.analysis.rows.derived import with_derived

    store = Store(report_db, readonly=True)
    rows = store.results()
    derived = with_derived(rows)
    scaled = [d for d in derived if d.derived.scaling_efficiency is not None]
    assert scaled, "the report's DDP rows have a 1-GPU baseline in the same run"
    for d in scaled:
        assert "scaling_efficiency" not in d.row()["extra"]     # what the store holds is unchanged
        assert d.extra.scaling_efficiency is None
        assert d.row() == next(r for r in rows if r.id == d.id).row()


def test_the_report_reads_the_results_table_once(report_db):
    from gpuarena.report.build import gather

    store = Store(report_db, readonly=True)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    gather(store)
    reads = [s for s in statements if re.search(r"\bFROM results\b", s)]
    assert len(reads) == 1, reads


def test_flags_have_a_kind_where_they_arise():
    """A workload's check() says NaN with a kind; text is never read for one."""
    assert nan_flag("loss turned to NaN/inf").kind is FlagKind.nan
    assert as_flag("output is fine, no NaN here").kind is FlagKind.other   # plain text: no guessed kind
    from gpuarena.analysis.physics.roofline import is_finite_result
    from gpuarena.store.rows import validated

    row = {"id": 1, "case_key": "k", "workload": "matmul", "variant": "seed", "params": {}, "status": "ok",
           "throughput_median": 10.0, "warnings": ["a note that mentions NaN"], "extra": {}}
    assert is_finite_result(validated(row))
    assert not is_finite_result(validated({**row, "extra": {"nan": True}}))
    assert [f.kind for f in validated({**row, "extra": {"nan": True}}).flags][0] is FlagKind.nan


EXTRA_BY_KEY = re.compile(r"""extra\)?\[["']|extra\.get\(|\[["']extra["']\]|get\(["']extra["']\)""")


def test_analysis_and_report_read_extra_by_attribute():
    """0 string-key reads of extra in analysis/ and report/: every figure they read is typed
    (store/extra.py), so a wrong type is refused on the way in, never met by a section."""
    found = [f"{p.relative_to(SRC)}:{i}" for d in ("analysis", "report") for p in sorted((SRC / d).rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if EXTRA_BY_KEY.search(line)]
    assert found == []


def test_share_of_peak_is_at_the_executed_precision():
    """One rule for "% of peak" (the issue's H200 ResNet-50 example): PyTorch's default precision runs
    the convolutions in TF32 on Hopper, so the share is of the TF32 peak, as the claim check counts it."""
    from gpuarena.analysis.rows.derived import share_of_peak
    from gpuarena.data import catalog
    from gpuarena.report.model import catalog_share
    from gpuarena.store.rows import validated

    r = validated({"id": 1, "case_key": "k", "workload": "resnet50-train", "variant": "seed", "status": "ok",
                   "params": {"batch_size": 64}, "device_name": "NVIDIA H200", "precision": "default",
                   "throughput_median": 2000.0, "tflops": 49.0})
    h200 = catalog.find("NVIDIA H200")
    assert share_of_peak(r) == catalog_share(r) == 49.0 / h200.peak("tf32")
    assert round(share_of_peak(r), 3) == 0.099 and 49.0 / h200.peak("fp32") > 0.7   # not 73% of FP32's
    ieee = validated({**r.row(), "variant": "fp32", "precision": "fp32"})            # TF32 off: FP32's peak
    assert share_of_peak(ieee) == 49.0 / h200.peak("fp32")


def test_a_result_is_read_by_attribute_only(report_db):
    """A Result (and its expected figure) is no mapping: r["x"], r.get("x") and r.keys() fail for every
    reader, the tests too (results --format json is the dict form); the whole report is built from attributes."""
    from collections.abc import Mapping

    from gpuarena.report.build import gather
    from gpuarena.store.derived import Expected, ModelFigure, Reference

    store = Store(report_db, readonly=True)
    r = store.results()[0]
    assert not isinstance(r, Mapping)
    for model in (Result, Expected, Reference, ModelFigure):         # the derived figures too
        assert not any(hasattr(model, name) for name in ("__getitem__", "get", "keys", "items", "values")), model
    with pytest.raises(TypeError, match="not subscriptable"):
        r["workload"]
    assert gather(store).sections
