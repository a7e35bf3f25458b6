"""Architecture capabilities are catalog columns (gpu_specs.csv tf32, fp8, sparsity_2_4, nvlink_sharp, with
their capability_source), read through data/catalog.py's GPU: they agree, for every catalog card, with the
code lists they replace (analysis/rows/precision.py TENSOR_TF32_ARCHS, workloads/precision.py NO_TF32,
analysis/physics/micro_check.py NO_SPARSITY and its Hopper-on NVLink SHARP) and with the compute capability
the workloads check on the device they run on; no module keeps such a list again."""

import csv
import re
from pathlib import Path

import pytest

from gpuarena.analysis.physics import micro_check
from gpuarena.analysis.rows import precision as P
from gpuarena.data import catalog
from gpuarena.workloads import precision as W

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuarena"
# The lists as they were written before the columns.
OLD_TENSOR_TF32 = ("ampere", "ada", "hopper", "blackwell")
OLD_NO_TF32 = frozenset({"volta", "turing", "pascal", "cpu"})
OLD_NO_SPARSITY = ("volta", "turing")
OLD_SHARP = ("hopper", "blackwell")
GPUS = catalog.load()


def _cc(g) -> tuple[int, int]:
    major, minor = g.raw["compute_capability"].split(".")
    return int(major), int(minor)


@pytest.mark.parametrize("g", GPUS, ids=lambda g: g.short)
def test_the_columns_agree_with_the_old_lists(g):
    fam = g.family
    assert g.tf32 == (fam in OLD_TENSOR_TF32) == (fam not in OLD_NO_TF32) == catalog.has_tf32(fam)
    assert g.sparsity_2_4 == (fam not in OLD_NO_SPARSITY)
    assert g.nvlink_sharp == (fam in OLD_SHARP)
    assert g.fp8 == (_cc(g) >= W.FP8_MIN_CAPABILITY) == bool(g.peaks.get("fp8"))
    assert g.tf32 == (_cc(g) >= (8, 0)) == bool(g.peaks.get("tf32"))
    assert g.raw["capability_source"]
    for n in (2, 4, 8):   # the all-reduce regime: reduced in the switch only where the old rule said
        old = bool(g.nvlink_gbs) and "pcie" not in g.name.lower() and n > 2 and fam in OLD_SHARP
        assert micro_check.nvls(g, n) == old


def test_one_family_one_set_of_capabilities():
    seen = {}
    for g in GPUS:
        caps = (g.tf32, g.fp8, g.sparsity_2_4, g.nvlink_sharp)
        assert seen.setdefault(g.family, caps) == caps, g.name


@pytest.mark.parametrize("arch,conv", [("volta", "fp32"), ("turing", "fp32"), ("pascal", "fp32"), ("cpu", "fp32"),
                                       ("ampere", "tf32"), ("ada", "tf32"), ("hopper", "tf32"), (None, "tf32")])
def test_a_familys_default_convolutions_follow_its_tf32_column(arch, conv):
    assert W.executed(frozenset({"seed"}), arch)["conv"] == conv
    assert W.executed(frozenset({"tf32"}), arch)["matmul"] == conv
    assert P.executed("resnet50-train", "default", arch)["conv"] == conv


def test_a_capability_column_is_yes_or_no_and_matches_the_peaks(tmp_path):
    rows = list(csv.DictReader(open(catalog.SPECS_CSV, encoding="utf-8", newline="")))

    def load(**change):
        p = tmp_path / "specs.csv"
        with open(p, "w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerow({**rows[0], **change})
        return catalog.load(str(p))

    with pytest.raises(ValueError, match="tf32 is 'maybe', not yes or no"):
        load(tf32="maybe")
    with pytest.raises(ValueError, match="fp8=yes but no fp8 peak"):
        load(fp8="yes")
    with pytest.raises(ValueError, match="capability_source"):
        load(capability_source="")
    assert load(sparsity_2_4="no")[0].sparsity_2_4 is False


def test_a_card_without_2_4_sparsity_is_not_offered_the_sparse_peak():
    """A matmul figure at twice the dense peak: on Ampere it is the 2:4 sparse peak quoted as dense; Volta's
    tensor cores have no structured sparsity (its sparsity_2_4 column), so nothing reaches it."""
    from gpuarena.analysis.verbs.check import check_claim

    def reason(gpu: str, prec: str) -> str:
        top = catalog.match(gpu).peaks[prec]
        return check_claim({"gpu": gpu, "workload": "matmul", "precision": prec, "throughput": 2 * top}).reason

    assert "structured-sparsity" in reason("A100 80GB SXM4", "bf16")
    assert "sparsity" not in reason("V100 32GB SXM2", "fp16")


def test_no_module_keeps_an_architecture_list():
    arch = "(volta|turing|pascal|ampere|ada|hopper|blackwell|cpu)"
    lists = re.compile(rf'[([{{]\s*"{arch}"(\s*,\s*"{arch}")+\s*,?\s*[)\]}}]')   # a literal of two or more
    hits = [f"{p.relative_to(SRC)}:{i}" for p in SRC.rglob("*.py")
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if lists.search(line)]
    assert hits == []
