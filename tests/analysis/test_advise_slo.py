"""advise -w llm-serve with a time-per-output-token SLO (``--set slo_ms=``): each GPU's batch is the
largest that keeps the SLO, not the largest that fits.  Without it, int4 weights on gpuarena's
tinygemm engine (prefill at 2.9% of the peak, the H200 bundles of sessions 10 and 11) were
projected at the largest batch that fits with 778 ms per output token."""

from __future__ import annotations

import os

import pytest

from gpuarena.analysis.verbs import serving as S
from gpuarena.analysis.physics import serving_model as M
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.store.bundle import import_bundle
from gpuarena.store.db import Store
from gpuarena.workloads.llm.shapes import SHAPES
from tests.conftest import gpuarena

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
BUNDLES = [os.path.join(ROOT, "docs", "data", f"h200-{b}.json") for b in ("s10-2026-12-02", "s11-2026-12-02")]
SETS = ["context=640", "output=128"]


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("slo") / "slo.db")
    store = Store(path)
    for b in BUNDLES:
        import_bundle(store, b)
    yield path, store.results(workload="llm-serve")
    store.close()


@pytest.mark.parametrize("prec", ["bf16", "int4", "fp8"])
def test_the_batch_is_the_largest_that_keeps_the_slo(prec, shipped):
    _, results = shipped
    free = {r.gpu: r for r in S.advise(results, [*SETS, f"precision={prec}"]).rows}
    adv = S.advise(results, [*SETS, f"precision={prec}", "slo_ms=50"])
    assert adv.slo_ms == 50 and "keeps the 50 ms SLO" in adv.explanation
    sh = M.shares(results, prec)
    for row in adv.rows:
        assert row.tpot_ms <= 50 and 1 <= row.batch <= row.max_batch == free[row.gpu].max_batch
        if row.batch < row.max_batch:       # one more sequence would miss it
            g = catalog.match(row.gpu)
            more = M.request(SHAPES["llama3-8b"], g, prec, 1, row.batch + 1, 512, 128, sh.decode, sh.prefill)
            assert more["tpot_ms"] > 50
        else:                                     # the largest that fits keeps it: as without the SLO
            assert row.tokens_per_s == pytest.approx(free[row.gpu].tokens_per_s)


def test_int4_on_this_engine_is_slo_bound_not_memory_bound(shipped):
    _, results = shipped
    h200 = catalog.match("H200").name
    free = next(r for r in S.advise(results, [*SETS, "precision=int4"]).rows if r.gpu == h200)
    slo = next(r for r in S.advise(results, [*SETS, "precision=int4", "slo_ms=50"]).rows if r.gpu == h200)
    assert free.batch == free.max_batch and free.tpot_ms > 500       # 778 ms per token at 1,452
    assert slo.batch < free.batch and slo.tpot_ms <= 50


def test_an_slo_no_gpu_keeps_and_bad_values(shipped):
    path, results = shipped
    adv = S.advise(results, [*SETS, "slo_ms=4"])          # bf16: ~5 ms a token on an H200 at batch 1
    h200 = catalog.match("H200").name
    assert h200 not in {r.gpu for r in adv.rows}
    (why,) = [e.reason for e in adv.excluded if e.gpu == h200]
    assert "at batch 1, over the 4 ms SLO" in why
    with pytest.raises(UserError, match="no catalog GPU"):
        S.advise(results, [*SETS, "slo_ms=0.01"])
    for bad in ("-3", "inf", "fast"):
        with pytest.raises(UserError, match="slo_ms"):
            S.parse_sets([f"slo_ms={bad}"])
    out = gpuarena("advise", "-w", "llm-serve", "--set", "slo_ms=50", "--db", path)
    assert out.returncode == 0 and "within 50 ms per output token" in out.stdout
    out = gpuarena("advise", "-w", "llm-serve", "--set", "slo_ms=-1", "--db", path)
    assert out.returncode == 2 and "slo_ms" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    # an explicit batch is kept as asked
    assert all(r.batch == 8 for r in S.advise(results, [*SETS, "batch=8", "slo_ms=50"]).rows)
