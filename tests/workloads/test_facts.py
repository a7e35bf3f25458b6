"""What every workload declares about itself, and the precision rules of executed_precision."""

from __future__ import annotations

import pytest

from gpuarena.workloads import registry
from gpuarena.workloads.base import KINDS, RANK_AGGREGATES
from gpuarena.workloads.precision import OP_CLASSES

F = frozenset


def test_every_workload_declares_its_facts():
    for name, cls in registry.classes().items():
        assert cls.kind in KINDS, name
        assert cls.trains == (cls.kind == "training"), name
        assert cls.rank_aggregate in RANK_AGGREGATES, name
        assert cls.multi_gpu == (cls.launcher == "torchrun"), name
        assert cls.axis is None or cls.axis in cls.param_map(), name
        assert cls.dominant_op in OP_CLASSES + ("copy",), name
        p = cls.resolve_params({}, size="tiny")
        assert cls.peak_precision(F({"seed"}), "hopper", p) in ("fp32", "tf32", "bf16", "fp16", "fp8", "n/a"), name


def test_registry_answers_what_name_lists_used_to():
    assert {k: c.name for k, c in registry.ddp_models().items()} == {"resnet50": "resnet50-train",
                                                                     "bert-large": "bert-large-train"}
    assert registry.published_names()["ResNet-50 v1.5 training (ImageNet)"] == "resnet50-train"
    assert registry.is_device_probe("allreduce") and registry.is_device_probe("ddp-train")
    assert not registry.is_device_probe("bert-large-infer") and not registry.is_device_probe("no-such-workload")
    assert registry.get("allreduce").rank_aggregate == "min" and registry.get("ddp-train").rank_aggregate == "sum"


@pytest.mark.parametrize("variants,arch,matmul,conv,elementwise", [
    ({"seed"}, "ampere", "fp32", "tf32", "fp32"),      # allow_tf32 False for matmul, True for cuDNN
    ({"seed"}, "volta", "fp32", "fp32", "fp32"),       # no TF32 before Ampere
    ({"seed"}, None, "fp32", "tf32", "fp32"),          # unknown: a CUDA GPU of Ampere or newer
    ({"seed"}, "cpu", "fp32", "fp32", "fp32"),
    ({"fp32"}, "hopper", "fp32", "fp32", "fp32"),
    ({"tf32"}, "hopper", "tf32", "tf32", "fp32"),
    ({"tf32"}, "turing", "fp32", "fp32", "fp32"),
    ({"amp-bf16", "channels-last"}, "hopper", "bf16", "bf16", "fp32"),
    ({"amp-fp16"}, "ampere", "fp16", "fp16", "fp32"),
])
def test_executed_precision_follows_pytorch_defaults(variants, arch, matmul, conv, elementwise):
    got = registry.get("resnet50-train").executed_precision(F(variants), arch)
    assert (got["matmul"], got["conv"], got["elementwise"]) == (matmul, conv, elementwise)


def test_peak_precision_is_the_dominant_ops():
    assert registry.get("resnet50-train").peak_precision(F({"seed"}), "hopper") == "tf32"    # convolutions
    assert registry.get("bert-large-train").peak_precision(F({"seed"}), "hopper") == "fp32"  # matmuls
    assert registry.get("bert-large-infer").executed_precision(F({"bf16"}), "hopper")["elementwise"] == "bf16"
    assert registry.get("sd15-generate").peak_precision(F({"seed"}), "hopper") == "fp16"
    assert registry.get("matmul").peak_precision(F({"seed"}), "hopper", {"dtype": "fp8"}) == "fp8"
    ddp = registry.get("ddp-train")
    assert ddp.peak_precision(F({"seed"}), "ampere", {"model": "resnet50", "model_variant": "amp-bf16"}) == "bf16"
    assert ddp.peak_precision(F({"seed"}), "volta", {"model": "resnet50"}) == "fp32"


def test_flops_and_param_counts_are_pure_functions_of_params():
    resnet, bert = registry.get("resnet50-train"), registry.get("bert-large-train")
    assert resnet.flops(resnet.resolve_params({})) == pytest.approx(3 * 2 * 4.089e9)
    assert resnet.param_count({}) == 25_557_032
    assert bert.param_count(bert.resolve_params({})) == 336_226_108
    ddp = registry.get("ddp-train")
    p = ddp.resolve_params({"model": "bert-large"})
    assert ddp.flops(p) == bert.flops(bert.resolve_params({})) and ddp.param_count(p) == 336_226_108
    sd = registry.get("sd15-generate")
    assert sd.flops(sd.resolve_params({})) > 0 and sd.flops(sd.resolve_params({}, size="tiny")) is None
