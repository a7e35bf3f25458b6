"""ResNet-50 with batch norms folded and ReLU / residual add in the convolution's epilogue
(workloads/resnet50_infer/convfuse.py) computes what the unfused eval model computes."""

from __future__ import annotations

import pytest
import torch

from gpuarena.errors import UserError
from gpuarena.workloads import quant
from gpuarena.workloads.resnet50_infer import convfuse
from gpuarena.workloads.resnet50_infer.run import ResNet50Infer


def _resnet_with_real_statistics():
    import torchvision   # here, not at collection: every pytest worker collects this module (1.5 CPU s)

    torch.manual_seed(0)
    m = torchvision.models.resnet50().eval()
    for bn in (x for x in m.modules() if isinstance(x, torch.nn.BatchNorm2d)):   # fresh ones fold to nothing
        bn.running_mean.uniform_(-0.1, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
        bn.weight.data.uniform_(0.5, 1.5)
        bn.bias.data.uniform_(-0.1, 0.1)
    return m


@pytest.mark.parametrize("channels_last", [False, True])
def test_fused_resnet50_matches_the_unfused_model(channels_last):
    m = _resnet_with_real_statistics()
    x = torch.randn(3, 3, 64, 64)
    ref = quant.fp32_reference(m, lambda mm: mm(x))
    fused = convfuse.fuse_resnet(m)
    assert convfuse.fused_convs(fused) == 53       # stem, 16 blocks x 3, 4 downsamples: every convolution
    # the downsamples' biases moved into their block's last epilogue: a bare convolution each
    downs = [b.down for b in fused.layers if b.down is not None]
    assert len(downs) == 4 and all(d.bias is None for d in downs)
    if channels_last:
        fused, x = fused.to(memory_format=torch.channels_last), x.contiguous(memory_format=torch.channels_last)
    with torch.inference_mode():
        acc = quant.agreement(ref, fused(x), logits=True)
    assert acc["rel_rms_error"] < 1e-5 and acc["top1_agreement_centered"] == 1.0


def test_folding_needs_eval_mode_and_the_rung_stands_apart_from_compile():
    import torchvision

    with pytest.raises(ValueError, match="eval"):
        convfuse.fuse_resnet(torchvision.models.resnet18().train())
    for spec in ("cudnn-fused+compile", "cudnn-fused+int8-dynamic", "cudnn-fused+tensorrt"):
        with pytest.raises(UserError, match="exclude each other"):
            ResNet50Infer.parse_variant(spec)
    assert ResNet50Infer.canonical_variant("cudnn-fused+bf16+channels-last+cudnn-benchmark") == \
        "bf16+channels-last+cudnn-benchmark+cudnn-fused"


@pytest.mark.parametrize("size", [32, 33])
def test_space_to_depth_stem_is_the_7x7_stride_2_stem(size):
    """The rearranged stem (a 4x4 stride-1 convolution over 2x2 blocks, 16 channels) gives the 7x7
    stride-2 convolution's output, odd sizes included; the fused model keeps the plain one on request."""
    m = _resnet_with_real_statistics()
    plain = convfuse.fuse_resnet(m, stem="plain")
    s2d = convfuse.fuse_resnet(m)
    assert isinstance(s2d.stem, convfuse.SpaceToDepthStem) and isinstance(s2d.maxpool, convfuse.CompiledMaxPool)
    assert isinstance(plain.stem, convfuse.FusedConv) and convfuse.fused_convs(s2d) == convfuse.fused_convs(plain)
    assert s2d.stem.weight.shape == (64, 16, 4, 4)
    x = torch.randn(2, 3, size, size)
    with torch.inference_mode():
        want, got = plain.stem(x), s2d.stem(x)
        assert got.shape == want.shape and (got - want).norm() / want.norm() < 1e-5
        xl = x.contiguous(memory_format=torch.channels_last)
        assert convfuse.space_to_depth(xl, 16).is_contiguous(memory_format=torch.channels_last)
        want, got = plain(x), s2d(x)
        assert (got - want).norm() / want.norm() < 1e-5


@pytest.mark.gpu
def test_space_to_depth_stem_and_the_graph_check_on_a_gpu():
    """On a GPU: the cuDNN-fused stem over 16 channels and the compiled max pool give the plain
    stem's output, and a captured graph of the fused model replays the eager output (the check
    deploy.GraphedModel makes before timing; BENCHMARKS.md "2026-12-02 01:41 UTC" ran both on an H200)."""
    from gpuarena.workloads.resnet50_infer import deploy

    m = _resnet_with_real_statistics().cuda()
    plain = convfuse.fuse_resnet(m, stem="plain").to(torch.bfloat16).to(memory_format=torch.channels_last)
    s2d = convfuse.fuse_resnet(m).to(torch.bfloat16).to(memory_format=torch.channels_last)
    x = torch.randn(8, 3, 64, 64, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=torch.channels_last)
    with torch.inference_mode():
        want, got = plain(x).float(), s2d(x).float()
    assert (got - want).norm() / want.norm() < 2e-2
    # the graph holds its model: the fused model has no other reference here, and blocks freed after the
    # capture are filled with NaN before the replays (on the H200 a graph that outlived its model's
    # weights replayed non-finite once that memory was reused; BENCHMARKS.md, 2026-12-02 01:41 UTC)
    fresh = convfuse.fuse_resnet(m).to(torch.bfloat16).to(memory_format=torch.channels_last)
    graphed = deploy.GraphedModel(fresh, x)         # raises if a replay differs from the eager forward
    del fresh
    junk = [torch.full((1 << 14,), float("nan"), device="cuda") for _ in range(512)]
    with torch.inference_mode():
        first = graphed(x).float().clone()
        again = graphed(x).float()
    del junk
    assert torch.equal(first, again) and torch.isfinite(again).all()
    assert torch.allclose(again, got, rtol=1e-2, atol=1e-2)
