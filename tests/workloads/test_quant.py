"""The low-precision inference rungs (workloads/quant.py): int8 keeps a tiny classifier's top-1,
1x1 convolutions as linears are exact, the rungs run through the real runner into the database
with their measured accuracy, float8 is refused on a CPU with its cause, and the variant rules."""

from __future__ import annotations

import sys

import pytest
import torch
from torch import nn

from gpuarena.errors import UserError, WorkloadSkipped
from gpuarena.workloads import quant, quant_rungs
from gpuarena.workloads.bert.run import BertLargeInfer
from gpuarena.workloads.resnet50_infer.run import ResNet50Infer
from tests.workloads.conftest import assert_ok, run_entries


def _classifier_and_inputs():
    """A small MLP over inputs drawn around 10 class centres: its logits pick a clear class."""
    torch.manual_seed(0)
    centres = torch.randn(10, 64) * 3
    x = centres.repeat(20, 1) + 0.3 * torch.randn(200, 64)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)).eval()
    with torch.no_grad():      # the output layer reads the class centres through the hidden layer
        model[2].weight.copy_(torch.randn(10, 256) * 0.2)
    return model, x


@pytest.mark.parametrize("rung", ["int8-dynamic", "int8-weights"])
def test_int8_keeps_the_fp32_top1_of_a_tiny_classifier(rung):
    pytest.importorskip("torchao")
    model, x = _classifier_and_inputs()
    ref = quant.fp32_reference(model, lambda m: m(x))
    info = quant.quantize(model, rung)
    assert info["quantized_layers"] == {"linears": 2, "quantized": 2}
    with torch.inference_mode():
        out = model(x).float()
    acc = quant.agreement(ref, out, logits=True)
    assert acc["rel_rms_error"] < 0.02 and acc["cosine_min"] > 0.99
    # a class may change only where FP32's own margin is within the row's quantization error (int8
    # kernels differ by CPU and thread count, so which near-ties flip is the machine's, not the rung's)
    flipped = ref.argmax(1) != out.argmax(1)
    top2 = ref.topk(2, dim=1).values
    err = (out - ref).abs().max(1).values
    assert bool(((top2[:, 0] - top2[:, 1])[flipped] <= 2 * err[flipped]).all())
    assert acc["top1_agreement"] >= 0.9


def test_agreement_figures():
    ref = torch.tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    same = quant.agreement(ref, ref.clone(), logits=True)
    assert same["rel_rms_error"] == 0 and same["top1_agreement"] == 1 and same["cosine_min"] == pytest.approx(1)
    flipped = quant.agreement(ref, ref.flip(0), logits=True)
    assert flipped["top1_agreement"] == 0 and flipped["max_abs_error_rel"] == pytest.approx(1.0)


@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("channels_last", [False, True])
def test_a_1x1_convolution_as_a_linear_layer_is_exact(stride, channels_last):
    torch.manual_seed(0)
    conv = nn.Conv2d(16, 32, 1, stride=stride, bias=True).eval()
    x = torch.randn(2, 16, 9, 9)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        torch.testing.assert_close(quant.Conv1x1AsLinear(conv)(x), conv(x), rtol=1e-5, atol=1e-5)
    net = nn.Sequential(nn.Conv2d(3, 16, 3), nn.Sequential(conv, nn.Conv2d(32, 8, 1, groups=2)))
    assert quant.convs_as_linears(net) == 1          # the 3x3 and the grouped 1x1 stay convolutions
    assert isinstance(net[1][0], quant.Conv1x1AsLinear) and isinstance(net[0], nn.Conv2d)


def test_rungs_run_through_the_runner_or_are_refused_with_the_cause(db_path):
    pytest.importorskip("torchao")
    rs = run_entries(db_path, [
        {"workload": "resnet50-infer", "variants": ["int8-dynamic", "bf16+channels-last+fp8-dynamic",
                                                    "channels-last+cudnn-fused"], "params": {"batch_size": 4}},
        {"workload": "bert-large-infer", "variants": ["bf16+sdpa+int8-weights"]},
    ], repeats=2)
    res_int8, res_fp8, fused, bert = rs
    assert_ok(res_int8)
    e = res_int8.extra
    assert res_int8.precision == "int8" and e.quantized_layers["convs_as_linears"] == 36
    assert e.quantized_layers["quantized"] == 37 and "Int8DynamicActivation" in e.quantization
    assert e.accuracy["rel_rms_error"] < 0.2 and 0 <= e.accuracy["top1_agreement_centered"] <= 1
    assert "perplexity" in e.torchao_accuracy
    assert res_fp8.status == "skipped"
    assert res_fp8.error == ("fp8-dynamic needs a CUDA GPU of compute capability 8.9+ (Ada, Hopper); "
                                "this is a CPU")
    assert_ok(fused)       # folded batch norms: the FP32 model's output (workloads/resnet50_infer/convfuse.py)
    assert fused.extra.fused_convs == 53 and fused.extra.accuracy["rel_rms_error"] < 1e-4
    assert_ok(bert)
    assert bert.precision == "bf16" and bert.extra.accuracy["cosine_min"] > 0.99


def test_without_torchao_a_rung_is_refused_with_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchao", None)      # import torchao -> ImportError
    with pytest.raises(WorkloadSkipped, match=r"int8-dynamic needs torchao.*pip install 'gpuarena\[quant\]'"):
        quant.require("int8-dynamic", torch.device("cpu"))


def test_variant_rules():
    for cls in (ResNet50Infer, BertLargeInfer):
        with pytest.raises(UserError, match="add bf16"):
            cls.parse_variant("fp8-dynamic")
        with pytest.raises(UserError, match="exclude each other"):
            cls.parse_variant("bf16+int8-dynamic+fp8-dynamic")
        assert cls.canonical_variant("fp8-dynamic+compile+bf16") == "bf16+compile+fp8-dynamic"
        assert cls.executed_precision(frozenset({"bf16", "fp8-dynamic"}), "hopper")["matmul"] == "fp8"
        assert cls.executed_precision(frozenset({"bf16", "int8-weights"}), "hopper")["matmul"] == "bf16"
        assert all(v in cls.variants and "accuracy" in cls.variants[v] for v in quant_rungs.RUNGS)
    with pytest.raises(UserError, match="instead of amp-bf16"):
        BertLargeInfer.parse_variant("amp-bf16+int8-dynamic")
    with pytest.raises(UserError, match="exclude each other"):
        ResNet50Infer.parse_variant("int8-dynamic+tensorrt")
    # ResNet-50's 3x3 convolutions stay in bf16: the peak that bounds it is still bf16's
    assert ResNet50Infer.peak_precision(frozenset({"bf16", "int8-dynamic"}), "hopper") == "bf16"
    assert BertLargeInfer.peak_precision(frozenset({"bf16", "int8-dynamic"}), "hopper") == "int8"


def test_an_output_far_from_the_fp32_reference_is_flagged_wrong():
    """check() of the inference workloads: a finite output whose rows point elsewhere than the FP32
    model's is wrong, not lossy (a CUDA graph that replayed over freed weights gave cosine 0.00 on the
    H200), and is flagged like a NaN; a lossy one is not."""
    from gpuarena.store.flags import FlagKind

    g = torch.Generator().manual_seed(0)
    ref = torch.randn(8, 1000, generator=g)
    lossy = ref + 0.01 * torch.randn(8, 1000, generator=g)
    assert quant.output_flags(ref, lossy, logits=True) == []
    wrong = quant.output_flags(ref, torch.randn(8, 1000, generator=g) * 1e20, logits=True)
    assert [f.kind for f in wrong] == [FlagKind.nan] and "cosine" in wrong[0].message
    nan = quant.output_flags(ref, torch.full((8, 1000), float("nan")), logits=True)
    assert [f.message for f in nan] == ["output has NaN/inf"]
    assert quant.output_flags(None, lossy, logits=False) == [] and quant.output_flags(ref, None, logits=True) == []
