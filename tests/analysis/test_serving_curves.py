"""The serving curves join points across llm-serve versions where no later version changed the
code that timed them, and keep the others apart (issue 23).  CPU: the H200 bundles in docs/data,
imported; no runs."""

from __future__ import annotations

import os

import pytest

from gpuarena.analysis.verbs import serving_curves
from gpuarena.report.serving import versions_text
from gpuarena.store.bundle import import_bundle
from gpuarena.store.db import Store
from gpuarena.workloads import registry
from gpuarena.workloads.llm.serve import LLMServe

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
BUNDLES = ("h200-s9-serve-2026-12-01", "h200-s10-2026-12-02", "h200-s11-2026-12-02", "h200-s12-2026-12-02",
           "h200-s13-2026-12-02")
BF16 = "compile+fused-proj"


@pytest.fixture(scope="module")
def curves(tmp_path_factory):
    store = Store(str(tmp_path_factory.mktemp("serve") / "h200.db"))
    for b in BUNDLES:
        import_bundle(store, os.path.join(ROOT, "docs", "data", f"{b}.json"))
    yield serving_curves.curves(store.results(workload="llm-serve"))
    store.close()


def _pick(curves, variant, prefill, current=True, attention="flex"):
    return [c for c in curves if c.variant == variant and c.prefill == prefill
            and c.attention == attention and c.current == current]


def _by_batch(curve) -> dict:
    return {p.batch: (p.version, round(p.decode_tokens_per_s)) for p in curve.points}


def test_current_curve_joins_points_of_versions_that_changed_nothing_since(curves):
    (cur,) = _pick(curves, BF16, "compiled")
    # batch 64 timed at v3 (flex), 128 at v5, 256 at v9: no version since changed a batched bf16 decode
    assert _by_batch(cur) == {64: (3, 9706), 128: (5, 15281), 256: (9, 19628)}
    assert cur.version == LLMServe.version and cur.timed_by == [3, 5, 9]
    assert versions_text(cur) == " · llm-serve v9 (points timed by v3, v5, v9, unchanged since)"
    # the SLO capacity follows the same key: the largest batch of the joined curve
    assert cur.slo_batch == cur.largest_fit == 256


def test_point_a_later_version_changed_keeps_its_own_curve(curves):
    # bf16 batch 1 at v5: version 8 realised the SwiGLU product of the one-row decode
    (old,) = _pick(curves, BF16, "compiled", current=False)
    assert _by_batch(old) == {1: (5, 202)} and old.version == 5 and old.changed_by == [8]
    assert versions_text(old) == " · llm-serve v5 (superseded: changed by v8)"
    assert 1 not in _by_batch(_pick(curves, BF16, "compiled")[0])
    # FP8 did not change since v6 (its w2 is an Fp8Linear): v6's batch 64 beside v8's batch 1
    (fp8,) = _pick(curves, BF16 + "+fp8-weights", "eager")
    assert _by_batch(fp8) == {1: (8, 277), 64: (6, 10480)}
    assert versions_text(fp8).endswith("(points timed by v6, v8, unchanged since)")
    # torchao's FP8 at v3 is not today's FP8 (v6); gemv at v8 is not v9's
    assert {c.version: c.changed_by for c in curves if "fp8-weights" in c.variant and not c.current} \
        == {3: [6], 8: [9]}
    # superseded curves come after the current ones
    assert [c.current for c in curves] == sorted((c.current for c in curves), reverse=True)


def test_cuda_graph_prefill_is_a_recipe_of_its_own(curves):
    (graph,) = _pick(curves, BF16 + "+gemv", "compiled (CUDA graphs)")
    assert _by_batch(graph) == {1: (9, 219)}
    assert not _pick(curves, BF16 + "+gemv", "compiled")


def test_version_table_names_each_change():
    ask = LLMServe.changed_since
    assert set(LLMServe.version_changes) == set(range(2, LLMServe.version + 1))   # a bump adds its line
    assert ask(5, BF16.split("+"), {"batch_size": 1, "prompt_len": 512}) == [8]
    assert ask(5, BF16.split("+"), {"batch_size": 64, "prompt_len": 512}) == []
    assert ask(1, ["compile"], {"batch_size": 64, "prompt_len": 512}) == [2]
    assert ask(1, ["seed"], {"batch_size": 64, "prompt_len": 512}) == []
    assert ask(3, ["compile", "fused-proj", "int8-weights"], {"batch_size": 1, "prompt_len": 512}) == [5]
    assert ask(LLMServe.version + 1, ["seed"], {"batch_size": 1}) is None   # a version this installation lacks
    # a workload without a table: today's version is current, an older one cannot be told
    matmul = registry.get("matmul")
    assert matmul.changed_since(matmul.version, [], {}) == [] and matmul.changed_since(0, [], {}) is None
