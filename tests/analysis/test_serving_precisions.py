"""Weight-only serving precisions (issue 23) in the decisions: the bytes a weight moves
(workloads/llm/precisions.py), the measured decode share of the matching precision, and check and
advise for llm-serve at int8 and int4 weights.

Input: the 2026-12-02 H200 bundle (docs/data/h200-s10-2026-12-02.json; BENCHMARKS.md "2026-12-02 01:41 UTC"):
llama3-8b, prompt 512 + 128 new tokens, batch 1, `compile+fused-proj`: bf16 194.6 decode tokens/s
(16.06 GB of weights), `+int8-weights` 242.9 (8.56 GB), `+int4-weights` 322.1 (5.07 GB, whole
request 196.8 tokens/s).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gpuarena.analysis.verbs import check as C
from gpuarena.analysis.verbs import serving as S
from gpuarena.analysis.physics import serving_model as M
from gpuarena.analysis.physics import serving_evidence as SE
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.store.bundle import import_bundle
from gpuarena.store.db import Store
from gpuarena.workloads import registry
from gpuarena.workloads.llm import precisions as W
from gpuarena.workloads.llm.shapes import SHAPES
from tests.conftest import gpuarena

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
BUNDLE = os.path.join(ROOT, "docs", "data", "h200-s10-2026-12-02.json")
LLAMA3_8B = SHAPES["llama3-8b"]
H200 = catalog.match("H200")
LENGTHS = ["--set", "shape=llama3-8b", "--set", "prompt_len=512", "--set", "new_tokens=128"]


@pytest.fixture(scope="module")
def s10(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("s10") / "s10.db")
    store = Store(path)
    import_bundle(store, BUNDLE)
    serve = {M.weight_precision(r): r for r in store.results(workload="llm-serve")
             if r.status == "ok" and r.extra.batch == 1}
    yield path, store, serve
    store.close()


# --- the bytes a weight moves -------------------------------------------------------------------

def test_weight_bytes_match_what_the_h200_runs_allocated(s10):
    """The table's weights against the bytes each rung allocated on the H200 (extra.weights_bytes):
    bf16 and int8 within 0.1% (the RoPE tables: 2 MB), int4 within 1% (tinygemm's packing)."""
    _, _, serve = s10
    for prec, rel in (("bf16", 1e-3), ("int8", 1e-3), ("int4", 1e-2)):
        assert M.weights_bytes(LLAMA3_8B, prec) == pytest.approx(serve[prec].extra.weights_bytes, rel=rel)
    assert W.bytes_per_weight(LLAMA3_8B, "bf16") == 2.0
    assert W.bytes_per_weight(LLAMA3_8B, "int8") == pytest.approx(1.0, abs=1e-3)
    assert W.bytes_per_weight(LLAMA3_8B, "int4") == pytest.approx(0.5 + 4 / 128, abs=1e-3)


def test_group_overhead_from_the_group_size_and_untakeable_layers_stay_in_bf16():
    assert W.linear_bytes(128, 8, "int4") == 128 * 8 / 2 + 8 * 1 * 4           # one group of 128 a row
    assert W.linear_bytes(96, 8, "int4") == 96 * 8 / 2 + 8 * 3 * 4             # groups of 32
    assert W.linear_bytes(40, 8, "int4") == 40 * 8 * 2                         # no tinygemm layout: bf16
    assert W.linear_bytes(4096, 1024, "int8") == 4096 * 1024 + 1024 * 2         # a bf16 scale a channel
    assert W.linear_bytes(4096, 1024, "fp8") == 4096 * 1024 + 1024 * 4


def test_the_table_is_torch_free_and_names_the_workloads_variants():
    code = ("import sys; from gpuarena.workloads.llm import precisions; "
            "from gpuarena.analysis.physics import serving_model; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")})
    assert out.stdout.strip() == "False"
    assert set(W.VARIANT_PRECISION) <= set(registry.get("llm-serve").variants)
    assert W.of_variant("compile+fused-proj+int4-weights", "bf16") == "int4"
    assert W.of_variant("compile+int8-weights", "bf16") == "int8"
    assert W.of_variant("compile+fused-proj", "bf16") == "bf16" and W.of_variant("seed", "fp32") == "fp32"


# --- the measured share of the matching precision --------------------------------------------

def test_each_precision_reads_its_own_measured_share(s10):
    """int4's share is int4's bytes x its decode tokens/s over the datasheet (~0.27 on the H200), not
    bf16's bytes (4x that: capped at 1); a projection at that share gives the measured rate back."""
    _, store, serve = s10
    results = store.results(workload="llm-serve")
    bw = H200.memory_bandwidth_gbs
    for prec, got in (("bf16", 194.59), ("int8", 242.90), ("int4", 322.06)):
        mine = M.shares([serve[prec]], prec)           # the stored figure counts the bytes allocated: within 1%
        assert mine.decode == pytest.approx(serve[prec].extra.decode_bandwidth_gbs / bw, rel=0.01)
        one = M.request(LLAMA3_8B, H200, prec, 1, 1, 512, 128, mine.decode, 0.5)
        assert one["decode_tokens_per_s"] == pytest.approx(got, rel=1e-3)
        if prec != "bf16":                              # bf16: the batch-128 result reads a little more
            assert f"result {serve[prec].id}" in M.shares(results, prec).decode_from
    int4 = M.shares(results, "int4").decode
    assert 0.25 < int4 < 0.3
    as_bf16 = M.decode_bytes(LLAMA3_8B, "bf16", 1, 576) * 322.06 / (H200.memory_bandwidth_gbs * 1e9)
    assert as_bf16 > 3.5 * int4


def test_without_a_result_of_that_precision_the_published_share_stands(s10):
    _, store, _ = s10
    bf16_only = [r for r in store.results(workload="llm-serve") if M.weight_precision(r) == "bf16"]
    assert M.shares(bf16_only, "int4").decode == pytest.approx(862.69 / 2039)
    assert "gpt-fast" in M.shares(bf16_only, "int8").decode_from
    assert SE.ceiling(bf16_only, "int4").decode == pytest.approx(1097.66 / 2039)
    fp8 = M.shares(bf16_only, "fp8")            # no published fp8 share: the bf16 engine's, said so
    assert "carried to fp8" in fp8.decode_from


@pytest.mark.parametrize("prec", M.PRECISIONS)
@pytest.mark.parametrize("gpu", ["H200", "A100 80GB SXM4", "L40S", "H100 80GB PCIe"])
def test_a_projected_decode_never_outruns_bandwidth_over_the_bytes_of_its_precision(prec, gpu, s10):
    g = catalog.match(gpu)
    why = M.refusal(g, prec, LLAMA3_8B)
    if why:     # the one pair refused: FP8 weights on a GPU without FP8 tensor cores
        assert (prec, gpu) == ("fp8", "A100 80GB SXM4") and "compute capability 8.9+" in why
        return
    results = s10[1].results(workload="llm-serve")
    for batch in (1, 64):
        total, dense = W.dense_bytes(LLAMA3_8B, prec), LLAMA3_8B.dim * batch * W.bytes_per_weight(LLAMA3_8B, prec)
        step = total + dense + 2 * 32 * batch * 576 * 8 * 128 * 2               # weights + KV at 576 tokens
        limit = batch * g.memory_bandwidth_gbs * 1e9 / step
        for share in (M.shares(results, prec).decode, 1.0, 3.0):               # a share above 1 is capped
            got = M.request(LLAMA3_8B, g, prec, 1, batch, 512, 128, share, 1.0)["decode_tokens_per_s"]
            assert got <= limit * (1 + 1e-9)
        assert M.upper_bound(LLAMA3_8B, g, prec, 1, batch, 512, 128)["decode_tokens_per_s"] <= limit * (1 + 1e-9)


# --- check and advise from the command line -------------------------------------------------

def _check(db: str, prec: str, *claim: str):
    return gpuarena("check", "-w", "llm-serve", "--gpu", "H200", "--precision", prec, "--batch-size", "1",
                    *claim, *LENGTHS, "--db", db, "--format", "json")


def test_check_accepts_the_stored_int4_result_and_bounds_int4_by_int4_bytes(s10):
    db, _, serve = s10
    int4 = serve["int4"]
    whole = _check(db, "int4", "--throughput", f"{int4.throughput_median:.2f}")
    decode = _check(db, "int4", "--latency", f"{int4.extra.tpot_ms_median / 1e3:.6f}")
    for out in (whole, decode):
        assert out.returncode == 0, out.stderr
        row = json.loads(out.stdout)[0]
        assert row["verdict"] == "plausible" and row["executed"] == "int4", row["reason"]
    bound = json.loads(whole.stdout)[0]["bound_tokens_per_s"]
    assert 1000 < bound < 1200               # 4.06 GB of int4 weights and KV a token at 4.8 TB/s
    above = json.loads(_check(db, "int4", "--throughput", f"{bound * 1.05:.1f}").stdout)[0]
    assert above["verdict"] == "impossible"
    # the same decode rate read as bf16 weights is beyond what the memory can deliver
    as_bf16 = json.loads(_check(db, "bf16", "--latency", f"{int4.extra.tpot_ms_median / 1e3:.6f}").stdout)[0]
    assert as_bf16["verdict"] == "impossible"
    int8 = json.loads(_check(db, "int8", "--throughput", f"{serve['int8'].throughput_median:.2f}").stdout)[0]
    assert int8["verdict"] == "plausible" and "bf16 arithmetic" in int8["executed_as"]


def test_an_unknown_precision_is_one_line_and_exit_2(s10):
    db = s10[0]
    out = _check(db, "int3", "--throughput", "100")
    assert out.returncode == 2 and "int3" in out.stderr and "bf16, fp16, fp8, int8, int4" in out.stderr
    assert "Traceback" not in out.stderr
    adv = gpuarena("advise", "-w", "llm-serve", "--precision", "int3", "--db", db)
    assert adv.returncode == 2 and "bf16, fp16, fp8, int8, int4" in adv.stderr


def test_advise_int4_uses_the_measured_int4_share(s10):
    db = s10[0]
    out = gpuarena("advise", "-w", "llm-serve", "--precision", "int4", "--set", "context=640", "--set",
                   "output=128", "--db", db, "--format", "json")
    assert out.returncode == 0, out.stderr
    adv = json.loads(out.stdout)
    assert adv["precision"] == "int4" and "int4-weights" in adv["bandwidth_share_from"]
    h200 = next(r for r in adv["rows"] if r["gpu"] == H200.name)
    assert h200["tokens_per_s_batch1"] == pytest.approx(322.06, rel=1e-3)       # the measured rate, in sample
    assert "int4 weights" in adv["explanation"]
    v100 = {e["gpu"]: e["reason"] for e in adv["excluded"]}[catalog.match("V100 32GB").name]
    assert "no BF16" in v100


@pytest.mark.parametrize("prec", ["bf16", "int8", "int4", "fp8"])
def test_what_advise_projects_check_accepts(prec, s10):
    """One physics: every advise row for llm-serve, at batch 1 and at the largest batch that fits,
    put through check at the same conditions, is plausible."""
    _, store, _ = s10
    adv = S.advise(store.results(workload="llm-serve"), ["context=640", "output=128", f"precision={prec}"])
    for row in adv.rows[:8]:
        for batch, thr in ((1, row.tokens_per_s_batch1), (row.batch, row.tokens_per_s)):
            claim = {"gpu": row.gpu, "workload": "llm-serve", "precision": prec, "batch_size": batch,
                     "throughput": thr if batch > 1 else None, "latency": 1 / thr if batch == 1 else None,
                     "shape": "llama3-8b", "prompt_len": 512, "new_tokens": 128}
            got = C.check_claim(claim, store)
            assert got.verdict == "plausible", (row.gpu, batch, got.reason)


def test_parse_sets_normalises_names():
    assert S.parse_sets(["precision=int4-weights"])["precision"] == "int4"
    assert S.parse_sets(["precision=BF16"])["precision"] == "bf16"
    with pytest.raises(UserError, match="int8, int4"):
        S.parse_sets(["precision=nf4"])


def test_a_csv_of_claims_names_the_weights_by_precision_or_variant(s10, tmp_path):
    csv = tmp_path / "claims.csv"
    csv.write_text("gpu,workload,precision,batch_size,throughput,model,prompt_len,new_tokens,source\n"
                   "H200,llm-serve,int4-weights,1,196.84,llama3-8b,512,128,session 10\n"
                   "H200,llm-serve,int8,1,2000,llama3-8b,512,128,above the int8 bound\n")
    out = gpuarena("check", "--csv", str(csv), "--db", s10[0], "--format", "json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [(r["executed"], r["verdict"]) for r in rows] == [("int4", "plausible"), ("int8", "impossible")]
    assert 600 < rows[1]["bound_tokens_per_s"] < 630          # 7.5 GB of int8 weights a token at 4.8 TB/s
