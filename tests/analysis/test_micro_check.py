"""check for micro-benchmark claims (analysis/physics/micro_check.py): a matmul's TFLOP/s, a device copy's
GB/s, a host link's GB/s and an all-reduce's bus bandwidth against the catalog's bounds, with the
credible share from data/micro_ceilings.csv.  Before it, check refused every one of these."""

import json

import pytest

from gpuarena.analysis.physics import interconnect, micro_check
from gpuarena.analysis.verbs import check
from gpuarena.data import catalog
from gpuarena.errors import UserError


def judge(**claim):
    return check.check_claim(claim)


@pytest.mark.parametrize("workload,gpu,extra,value,verdict", [
    ("matmul", "H100 80GB SXM5", {"precision": "bf16"}, 1000, "impossible"),    # above 989.4 dense
    ("matmul", "H100 80GB SXM5", {"precision": "bf16"}, 900, "implausible"),    # 91%; best 80.3% (+5%)
    ("matmul", "H100 80GB SXM5", {"precision": "bf16"}, 700, "plausible"),
    ("membw", "H100 80GB SXM5", {}, 3900, "impossible"),                        # above 3,350 GB/s of HBM3
    ("membw", "H200", {}, 4600, "implausible"),                                 # 96%; measured 4,268 (89%)
    ("membw", "H200", {}, 4180, "plausible"),
    ("h2d", "A100 80GB SXM4", {}, 40, "impossible"),                            # above gen4 x16's 31.5
    ("h2d", "A100 80GB SXM4", {}, 31, "implausible"),                           # 98% of the link
    ("d2h", "H200", {}, 50, "plausible"),                                       # 79% of gen5's 63.0
    ("allreduce", "A100 80GB SXM4", {"gpus": 8}, 320, "impossible"),            # above 300 per direction
    ("allreduce", "A100 80GB SXM4", {"gpus": 8}, 280, "implausible"),
    ("allreduce", "A100 80GB SXM4", {"gpus": 8}, 230, "plausible"),
    ("allreduce", "H100 80GB SXM5", {"gpus": 8}, 480, "plausible"),       # NVLink SHARP: above a direction
    ("allreduce", "H100 80GB SXM5", {"gpus": 8}, 600, "implausible"),     # the best published is 480
    ("allreduce", "H100 80GB SXM5", {"gpus": 2}, 440, "implausible"),     # no switch reduction at 2: ring's 370
    ("allreduce", "H100 80GB SXM5", {"gpus": 2}, 460, "impossible"),      # above 450 per direction
])
def test_each_verdict_for_each_kind(workload, gpu, extra, value, verdict):
    r = judge(gpu=gpu, workload=workload, throughput=value, **extra)
    assert r.verdict == verdict, r.reason
    assert r.bound > 0 and r.share_of_peak == pytest.approx(value / r.bound)
    if verdict != "impossible":
        assert r.ceiling["source"] and "credibly reached" in r.reason


def test_bounds_come_from_the_catalog_and_the_pcie_table():
    h100, a100 = catalog.match("H100 80GB SXM5"), catalog.match("A100 80GB SXM4")
    assert micro_check.bound("compute-peak", h100, "fp8")[0] == h100.peaks["fp8"]
    assert micro_check.bound("memory-bandwidth", h100)[0] == 3350
    assert micro_check.bound("host-link", a100)[0] == pytest.approx(31.5)
    assert micro_check.bound("host-link", h100)[0] == pytest.approx(63.0)
    assert micro_check.bound("host-link", catalog.match("V100 32GB"))[0] == pytest.approx(15.75)
    assert micro_check.bound("allreduce-busbw", a100, n=8)[0] == 300
    # Hopper's NVSwitch reduces in the switch over more than two GPUs: busbw up to 2(n-1)/n x a direction
    assert micro_check.bound("allreduce-busbw", h100, n=8)[0] == pytest.approx(450 * 1.75)
    assert micro_check.bound("allreduce-busbw", h100, n=2)[0] == 450
    # a PCIe card's NVLink bridge pairs two cards; beyond two the ring runs over PCIe
    assert micro_check.bound("allreduce-busbw", catalog.match("A100 80GB PCIe"), n=4)[0] == pytest.approx(31.5)


def test_sparse_figure_quoted_as_dense_is_named():
    r = judge(gpu="H100 80GB SXM5", workload="matmul", precision="fp16", throughput=1979)
    assert r.verdict == "impossible"
    assert "2:4 structured-sparsity peak" in r.reason and "quoted as dense" in r.reason
    between = judge(gpu="A100 80GB SXM4", workload="matmul", precision="bf16", throughput=500)
    assert "only 2:4 structured sparsity (624) reaches it" in between.reason
    v100 = judge(gpu="V100 32GB", workload="matmul", precision="fp16", throughput=250)    # Volta: no sparsity
    assert v100.verdict == "impossible" and "sparsity" not in v100.reason


def test_fp32_matmul_above_its_peak_would_need_tf32():
    r = judge(gpu="A100 80GB SXM4", workload="matmul", precision="fp32", throughput=150)
    assert r.verdict == "impossible" and "would need TF32 tensor cores (156 TFLOP/s)" in r.reason


def test_a800_fp16_290_is_above_the_best_ampere_matmul():
    r = judge(gpu="A800 80GB SXM4", workload="matmul", precision="fp16", throughput=290)
    assert r.verdict == "implausible"
    assert "A100 80GB SXM4" in r.reason and "ml-engineering" in r.reason
    assert r.credible_max == pytest.approx(271.2 / 312 * 1.05 * 312)


def test_a_generation_without_evidence_borrows_and_says_so():
    r = judge(gpu="L40S", workload="membw", throughput=700)
    assert r.ceiling["borrowed"] and "no Ada evidence" in r.reason
    assert r.verdict == "plausible"
    int8 = judge(gpu="H100 80GB SXM5", workload="matmul", precision="int8", throughput=1500)
    assert int8.verdict == "plausible" and int8.ceiling is None and "only the bound" in int8.reason


def test_every_evidence_row_has_a_source_and_lies_under_its_bound():
    rows = micro_check.published_evidence()
    assert {e.figure for e in rows} == {"compute-peak", "memory-bandwidth", "host-link", "allreduce-busbw"}
    # a share is of the bound, or for an all-reduce of the link per direction, which NVLink SHARP exceeds
    assert all(e.source and 0 < e.share <= (2 if e.regime == "nvls" else 1) for e in rows)
    assert all(src for _, src in interconnect.pcie_links().values())


@pytest.mark.parametrize("claim,match", [
    ({"workload": "matmul", "precision": "fp7", "throughput": 100}, "precision 'fp7'"),
    ({"workload": "matmul", "throughput": 100}, "needs --precision"),
    ({"workload": "matmul", "precision": "fp8", "throughput": 100, "gpu": "A100 80GB SXM4"}, "no FP8 peak"),
    ({"workload": "membw", "throughput": -5}, "finite positive"),
    ({"workload": "membw", "throughput": 0}, "finite positive"),
    ({"workload": "membw", "throughput": float("nan")}, "finite"),
    ({"workload": "membw", "throughput": 100, "precision": "bf16"}, "has none"),
    ({"workload": "membw", "throughput": 100, "batch_size": 8}, "batch_size: not part of a membw claim"),
    ({"workload": "membw"}, "needs its figure"),
    ({"workload": "h2d", "throughput": 10, "gpus": 4}, "one GPU's"),
    ({"workload": "allreduce", "throughput": 10}, "--gpus from 2"),
    ({"workload": "membw", "throughput": 100, "gpu": "Z9000"}, "Z9000"),
])
def test_hostile_input_is_one_user_error(claim, match):
    with pytest.raises(UserError, match=match):
        judge(**{"gpu": "H200", **claim})


def test_cli_judges_micro_claims_with_exit_codes(cli, tmp_path):
    env = {"GPUARENA_DB": str(tmp_path / "absent.db")}
    p = cli("check", "--gpu", "H100 80GB SXM5", "-w", "matmul", "--precision", "bf16", "--throughput", "1979",
            "--format", "json", env=env)
    assert p.returncode == 0, p.stderr
    row = json.loads(p.stdout)[0]
    assert row["verdict"] == "impossible" and "sparsity" in row["reason"]
    t = cli("check", "--gpu", "H200", "-w", "membw", "--throughput", "4180", env=env)
    assert t.returncode == 0 and "4,180.0 GB/s" in t.stdout and "plausible" in t.stdout
    for args, match in ((("-w", "matmul", "--precision", "fp3", "--throughput", "100"), "precision"),
                        (("-w", "membw", "--throughput", "-1"), "positive"),
                        (("-w", "membw", "--throughput", "100", "--gpu", "NoSuchGPU"), "NoSuchGPU"),
                        (("-w", "allreduce", "--throughput", "100"), "--gpus")):
        bad = cli("check", *(() if "--gpu" in args else ("--gpu", "H200")), *args, env=env)
        assert bad.returncode == 2 and match in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_cli_csv_mixes_micro_and_model_claims(cli, tmp_path):
    path = tmp_path / "claims.csv"
    path.write_text("gpu,workload,precision,batch_size,throughput,gpus,source\n"
                    "H200,membw,,,4180,,BENCHMARKS.md\n"
                    "A100 80GB SXM4,allreduce,,,240,8,article\n"
                    "H200,resnet50-train,default,256,2209,,measured\n")
    p = cli("check", "--csv", str(path), "--format", "json", env={"GPUARENA_DB": str(tmp_path / "absent.db")})
    assert p.returncode == 0, p.stderr
    assert [r["verdict"] for r in json.loads(p.stdout)] == ["plausible", "plausible", "plausible"]


def _membw(gbs: float) -> dict:
    from tests.analysis.conftest import result

    return result("NVIDIA A100-SXM4-80GB", 1, [1.0, 1.0, 1.0], workload="membw", params={"size_mb": 4096},
                  case_key=f"membw|seed|{gbs}", unit="GB/s", precision="n/a", throughput_median=gbs,
                  items_per_step=8.59, flops_per_item=None, tflops=None)


def test_a_measurement_raises_a_ceiling_and_one_above_the_bound_is_not_evidence(tmp_path):
    from gpuarena.store.db import Store

    claim = {"gpu": "A100 80GB SXM4", "workload": "membw", "throughput": 1950}
    assert check.check_claim(claim).verdict == "implausible"     # Hopper's 89% borrowed: at most 1,903
    s = Store(str(tmp_path / "m.db"))
    s.add_result(_membw(2500))                                      # above the 2,039 GB/s of HBM2e: broken
    assert check.check_claim(claim, s).verdict == "implausible"
    s.add_result(_membw(1900))
    r = check.check_claim(claim, s)
    assert r.verdict == "plausible" and "gpuarena measurement" in r.ceiling["source"]
    s.close()


def _ceilings(tmp_path, row: str):
    """The shipped micro_ceilings.csv with one more row."""
    from gpuarena.data import evidence

    path = tmp_path / "micro_ceilings.csv"
    path.write_text(evidence.MICRO_CSV.read_text(encoding="utf-8").rstrip("\n") + "\n" + row + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("row,match", [
    ("membw,H200,,4000,GB/s,1,,copy_,", r"micro_ceilings.csv line 18: source is empty"),
    ("membw,H200,,fast,GB/s,1,,copy_,a page", r"micro_ceilings.csv line 18: value 'fast' is not a number"),
    ("membw,H200,,4000,TFLOP/s,1,,copy_,a page", r"micro_ceilings.csv: membw on H200: the figure is in GB/s"),
    ("resnet50-train,H200,,4000,GB/s,1,,x,a page", r"micro_ceilings.csv: resnet50-train on H200: .*not a micro"),
    ("membw,Z9000,,4000,GB/s,1,,copy_,a page", r"micro_ceilings.csv: membw on Z9000: .*Z9000"),
    ("matmul,A100 80GB SXM4,fp8,400,TFLOP/s,1,,mm,a page", r"micro_ceilings.csv: matmul on A100.*no FP8 peak"),
])
def test_a_malformed_evidence_row_is_refused_naming_its_file(tmp_path, row, match):
    """micro_check reads data/micro_ceilings.csv through data/evidence.py's checks, then its own: before,
    a row without a source was evidence and a non-number a bare ValueError."""
    with pytest.raises(UserError, match=match):
        micro_check.published_evidence(_ceilings(tmp_path, row))


def test_cli_refuses_a_malformed_evidence_file_in_one_line(tmp_path, monkeypatch):
    """A shipped evidence file broken by an edit stops `check` with one line and exit 2, naming the file and
    line: before, a non-number was an internal error (exit 1) and a row without a source was evidence."""
    from gpuarena.data import evidence
    from tests.conftest import gpuarena

    bad = _ceilings(tmp_path, "membw,H200,,fast,GB/s,1,,copy_,a page")
    monkeypatch.setattr(evidence, "MICRO_CSV", bad)
    micro_check.published_evidence.cache_clear()
    try:
        p = gpuarena("check", "--gpu", "H200", "-w", "membw", "--throughput", "4000",
                     env={"GPUARENA_DB": str(tmp_path / "absent.db")})
    finally:
        micro_check.published_evidence.cache_clear()
    assert p.returncode == 2, p.stdout
    assert p.stderr.strip() == "gpuarena: error: micro_ceilings.csv line 18: value 'fast' is not a number"
