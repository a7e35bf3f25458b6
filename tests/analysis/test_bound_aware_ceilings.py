"""Issue 39, symptoms 1 and 2: a claim's credible maximum is the tighter of two ceilings of its generation
(the best share of the compute peak, the best share of the memory roof) and the card's own best tuned
figure; a ceiling borrowed from another generation, or set by framework figures alone, only warns.

Before: one attainment per generation, whatever bounded it: the H100's 69% of a *memory* roofline let the
compute-bound H20 train ResNet-50 at 66% of its BF16 peak, the H200 ran 19% above its own audited MLPerf
figure, and DeepSpeed's V100 BERT-Large (272 seq/s) was rejected by slower Ampere PyTorch rows."""

from __future__ import annotations

import pytest

from gpuarena.analysis.physics import limits as X
from gpuarena.analysis.physics.roofline import workload_params
from gpuarena.analysis.rows import precision as P
from gpuarena.analysis.verbs.check import check_claim
from gpuarena.data import catalog


def judge(**claim):
    return check_claim(claim)


@pytest.fixture(autouse=True)
def _published_only(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUARENA_DB", str(tmp_path / "absent.db"))


def test_a_compute_bound_h20_meets_hoppers_compute_ceiling_not_the_h100s_memory_one():
    r = judge(gpu="H20", workload="resnet50-train", precision="bf16", batch_size=256, throughput=4000)
    assert r.verdict == "implausible"
    assert r.ceiling["side"] == "compute" and not r.ceiling["borrowed"] and r.ceiling["tuned"]
    assert "the compute bound holds" in r.reason and "h200_ngc24.04_mxnet" in r.reason
    assert "; memory bound 6," in r.reason          # the looser bound is named too
    # MLPerf's H200 share of the BF16 peak (7,951 x 24.5 GFLOP / 989 TFLOP/s, 20%), widened by 8%
    assert 1200 < r.credible_max < 1400
    assert judge(gpu="H20", workload="resnet50-train", precision="bf16", batch_size=256,
                 throughput=1200).verdict == "plausible"


def test_a_card_above_its_own_audited_figure_is_implausible():
    r = judge(gpu="H200", workload="resnet50-train", precision="bf16", batch_size=256, throughput=9500)
    assert r.verdict == "implausible" and r.ceiling["side"] == "card"
    assert "the card bound holds" in r.reason and "7,951/s" in r.reason
    for thr in (7951, 7951 * 1.07):         # the figure itself, and within the spread between publications
        assert judge(gpu="H200", workload="resnet50-train", precision="fp16", batch_size=400,
                     throughput=thr).verdict == "plausible"


def test_deepspeeds_v100_bert_is_unverified_not_rejected():
    """DeepSpeed's BERT-Large seq-128 pre-training on one V100 (272 samples/s, 64 TFLOP/s; microsoft/DeepSpeed
    docs/_posts/2020-05-28-fastest-bert-training.md): Volta has no BERT evidence, so the A100's eager rows
    only warn; the peak still rejects."""
    r = judge(gpu="V100 32GB SXM2", workload="bert-large-train", precision="fp16", batch_size=64, seq_len=128,
              throughput=272)
    assert r.verdict == "plausible" and r.unverified
    assert "unverified: no evidence for Volta" in r.reason and r.ceiling["borrowed"]
    assert r.credible_max is None
    over = judge(gpu="V100 32GB SXM2", workload="bert-large-train", precision="fp16", batch_size=64, seq_len=128,
                 throughput=500)
    assert over.verdict == "impossible"


def test_a_ceiling_set_by_framework_figures_alone_warns_within_what_any_engine_reached():
    """Hopper's BERT-Large training evidence is gpuarena's compiled PyTorch on the H200 (37% of the BF16 peak);
    NVIDIA's DLE reached 49% on an A100.  Between the two only a warning; above both, implausible."""
    mid = judge(gpu="H20", workload="bert-large-train", precision="bf16", batch_size=64, seq_len=512, throughput=70)
    assert mid.verdict == "plausible" and mid.unverified and "framework figures alone" in mid.reason
    high = judge(gpu="H20", workload="bert-large-train", precision="bf16", batch_size=64, seq_len=512, throughput=85)
    assert high.verdict == "implausible" and not high.unverified


def test_the_two_ceilings_carry_to_the_claims_conditions():
    """One piece of evidence, two shares: at the claim's own image size the compute and memory times scale
    differently, and the credible figure is the tighter side there (never above the peak)."""
    g = catalog.match("H20")
    for size in (160, 224, 320):
        lim = X.limit("resnet50-train", g, P.request_of("bf16"), workload_params(
            "resnet50-train", {"batch_size": 256, "image_size": size}))
        sides = {b.side: lim.allows(b) for b in lim.bounds}
        assert lim.credible == pytest.approx(min(sides.values())) and lim.credible <= lim.peak
        assert lim.binding.side == "compute"


def test_a_compute_bound_figure_sets_no_memory_ceiling():
    """The H200's compute-bound BERT inference (1,507.9 seq/s at seq 512, data/ceilings.csv) used 30% of its
    memory roof because compute held it; as a memory ceiling it capped the H100, same BF16 peak and 70% of
    the bandwidth, at 1,141 seq/s, below the H200's own speed.  Only the compute side of it bounds."""
    r = judge(gpu="H100 80GB SXM5", workload="bert-large-infer", precision="bf16", batch_size=64, seq_len=512,
              throughput=1500)
    assert r.verdict == "plausible" and r.ceiling["side"] == "compute", r.reason
    assert "memory bound" not in r.reason
