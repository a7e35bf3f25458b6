"""An expected figure for every finite result (issue 39, symptom 6): the shipped bundles and the published
rows in one database, as scripts/decision_docs.sh builds it, read back through `results --format json`'s
annotation; each physics (roofline, serving, endpoint, decoder training, data parallel, collectives) answers
for its workloads, and none of its figures flags a result (they are a model's, not like for like)."""

from __future__ import annotations

import collections
import os

import pytest

from gpuarena.analysis.rows.derived import with_derived
from gpuarena.analysis.verbs.expected import annotate
from gpuarena.analysis.physics.roofline import is_finite_result
from gpuarena.analysis.rows.published import load_into
from gpuarena.store.bundle import import_bundle
from gpuarena.store.db import Store
from gpuarena.store.flags import diverged

BUNDLES = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "data")


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    store = Store(str(tmp_path_factory.mktemp("shipped") / "docs.db"))
    for name in sorted(os.listdir(BUNDLES)):
        if name.endswith(".json"):
            import_bundle(store, os.path.join(BUNDLES, name))
    load_into(store)
    everything = store.results()
    pool = [r for r in everything if r.status == "ok"]
    return annotate(with_derived(everything, pool), pool, store.environment)


def _finite(r) -> bool:
    """The decisions' rule (roofline.is_finite_result): ok, a finite figure, not diverged (a NaN loss runs at
    any speed: no speed record)."""
    return is_finite_result(r)


def test_every_finite_shipped_result_on_a_catalog_gpu_has_an_expected_figure(shipped):
    from gpuarena.data import catalog

    finite = [r for r in shipped if _finite(r)]
    missing = [(r.workload, r.variant, r.device_name) for r in finite if r.derived.expected is None]
    # the one without: MXNet's V100 on a DGX-2 (V100 SXM3), a card the catalog does not hold
    assert all(catalog.find(name or "") is None for _, _, name in missing), missing
    assert len(finite) >= 300 and len(missing) <= 1          # 2026-12-04: 318 of 319 (67 of 303 before)
    for r in finite:
        e = r.derived.expected
        if e is not None:
            assert e.low <= e.figure <= e.high and e.source and e.ratio > 0, (r.workload, r.variant, e)


def test_each_physics_answers_for_its_workloads(shipped):
    how = collections.defaultdict(set)
    for r in shipped:
        e = r.derived.expected
        if e is not None and e.basis == "model":
            how[r.workload].add(e.source.split(":")[1].strip().split(" ")[0])
    assert how["llm-serve"] == {"serving"} and how["endpoint-serve"] == {"serving"}
    assert how["llm-train"] == {"training"} and how["ddp-train"] == {"data-parallel"}
    assert "physics" in how["resnet50-infer"] and "physics" in how["bert-large-train"]
    ring = [r.derived.expected for r in shipped if r.workload == "allreduce" and r.params.get("size_mb") == 4096]
    assert ring and all(e.basis == "catalog" and 0.85 < e.ratio < 1.1 for e in ring)    # 345 GB/s on 2 H200s


def test_no_model_figure_flags_and_no_diverged_result_is_evidence(shipped):
    below = [r for r in shipped if r.derived.expected and r.derived.expected.below]
    assert below and all(r.derived.expected.like_for_like and r.derived.expected.basis != "model" for r in below)
    assert not any(r.source == "published" for r in below)         # a published figure is context, never flagged
    nan = {round(r.throughput_median, 6) for r in shipped if r.status == "ok" and r.throughput_median and diverged(r)}
    figures = {round(r.derived.expected.figure, 6) for r in shipped if r.derived.expected is not None
               and r.derived.expected.basis == "model"}
    assert not nan & figures


def test_the_serving_model_uses_the_same_recipes_decode_share(shipped):
    serve = [r for r in shipped if r.workload == "llm-serve" and r.variant == "compile+fused-proj"
             and r.params.get("batch_size") == 64 and r.derived.expected is not None
             and r.derived.expected.basis == "model"]
    assert serve
    for r in serve:
        e = r.derived.expected
        assert "batch 64, 512 in / 128 out" in e.source and 0.6 < e.ratio < 1.5, e.source
