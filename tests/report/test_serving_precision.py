"""The report's serving section and advise's title name the weights' precision of what was measured
(session 10's H200 bundle: llama3-8b with int4 weights)."""

from __future__ import annotations

import os

from gpuarena.report import serving
from gpuarena.report.text.serving import render
from gpuarena.analysis.verbs import serving as S
from gpuarena.store.bundle import import_bundle
from gpuarena.store.db import Store

BUNDLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "docs", "data",
                      "h200-s10-2026-12-02.json")


def test_the_kv_table_of_an_int4_curve_is_projected_at_int4(tmp_path):
    store = Store(str(tmp_path / "s10.db"))
    import_bundle(store, BUNDLE)
    int4 = [r for r in store.results(workload="llm-serve") if "int4-weights" in r.variant]
    sec = serving.section(int4)
    kv = sec.subsections[0]
    assert kv.title.endswith("(model, int4 weights)")
    assert "(int4 weights, 5.0 GB)" in kv.paragraphs[0] and "int4-weights" in kv.paragraphs[0]
    h200 = next(row for row in kv.tables[0].rows if "measured here" in row[0])
    assert h200[4] == "322.1"                   # tok/s at 1: the measured int4 decode, in sample
    adv = S.advise(int4, ["context=640", "precision=int4"])
    assert render(adv, "table").splitlines()[0].startswith("GPUs for serving llama3-8b (int4 weights): 512 + 128")
    store.close()
