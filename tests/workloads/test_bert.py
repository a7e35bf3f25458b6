"""BERT-Large inference and training at tiny size: runner + database, FLOP formula, variants."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from gpuarena.errors import UserError
from gpuarena.workloads import registry
from gpuarena.workloads.base import StepContext
from tests.workloads.conftest import assert_ok, run_entries


def make(name: str, variant: str, size: str = "tiny", **given):
    cls = registry.runnable(name)
    p = cls.resolve_params(given, size=size)
    return cls(StepContext(device=torch.device("cpu"), variants=cls.parse_variant(variant), params=p))


def test_bert_through_runner(db_path):
    infer, train = run_entries(db_path, [
        {"workload": "bert-large-infer", "variants": ["bf16+sdpa"]},
        {"workload": "bert-large-train", "variants": ["amp-bf16+eager+fused-adamw"]},
    ])
    for r in (infer, train):
        assert_ok(r)
        assert r.unit == "sequences/s" and r.precision == "bf16"
        assert r.items_per_step == 2  # tiny batch
    assert infer.extra.attn_implementation == "sdpa"
    assert train.extra.attn_implementation == "eager"
    assert train.flops_per_item > 3 * infer.flops_per_item  # backward + pretraining heads
    assert train.compile_s is None and train.extra.first_step_s > 0


@pytest.mark.parametrize("name", ["bert-large-infer", "bert-large-train"])
def test_flops_formula_matches_flop_counter(name):
    # Eager attention: every matmul is an mm/bmm the counter sees, so the formula must be exact.
    wl = make(name, "eager")
    wl.setup()
    with FlopCounterMode(display=False) as fc:
        wl.step()
    assert fc.get_total_flops() == pytest.approx(wl.flops_per_item() * wl.items_per_step(), rel=1e-9)


def test_flops_known_without_setup():
    # The analysis code prices published claims from params alone.
    infer = make("bert-large-infer", "seed", size="full")
    train = make("bert-large-train", "seed", size="full")
    assert infer.flops_per_item() == pytest.approx(0.335e12, rel=0.01)  # DIGEST.md's "~0.37 TFLOP"
    assert train.flops_per_item() == pytest.approx(1.104e12, rel=0.01)
    assert make("bert-large-train", "seed", size="full", seq_len=128).flops_per_item() < train.flops_per_item() / 3


@pytest.mark.parametrize("name,variant,why", [
    ("bert-large-infer", "fp16+amp-fp16", "exclude each other"),
    ("bert-large-infer", "sdpa+eager", "exclude each other"),
    ("bert-large-train", "compile+compile-max-autotune", "exclude each other"),
    ("bert-large-train", "seed+tf32", "does not combine"),
    ("bert-large-infer", "fused-adamw", "no variant"),
    ("bert-large-train", "amp-bf17", "did you mean 'amp-bf16'"),
])
def test_bad_variants_refused(name, variant, why):
    with pytest.raises(UserError, match=why):
        registry.get(name).parse_variant(variant)


def test_bad_params_refused():
    cls = registry.get("bert-large-infer")
    with pytest.raises(UserError, match="seq_len=1024: must be <= 512"):
        cls.resolve_params({"seq_len": "1024"})
    with pytest.raises(UserError, match="did you mean 'heads'"):
        cls.resolve_params({"head": 4})


@pytest.mark.parametrize("scope", ["encoder", "model"])
def test_compile_scope(scope, monkeypatch):
    # What SDPA receives inside the compiled graph: with the encoder as the scope the mask is
    # built by eager code, which drops the all-ones mask, so the flash kernel stays possible.
    from torch._dynamo.eval_frame import OptimizedModule

    masks = []

    def capture(gm, example_inputs):
        masks.extend(n.kwargs.get("attn_mask", n.args[3] if len(n.args) > 3 else None)
                     for n in gm.graph.nodes if "scaled_dot_product_attention" in str(n.target))
        return gm.forward

    real = torch.compile
    monkeypatch.setattr(torch, "compile", lambda model, mode=None: real(model, mode=mode, backend=capture))
    torch._dynamo.reset()
    wl = make("bert-large-infer", "sdpa+compile", compile_scope=scope)
    wl.setup()
    wl.step()
    assert wl.uses_compile() and not wl.check()
    assert len(masks) == 2  # one attention per layer of the tiny model
    if scope == "encoder":
        assert isinstance(wl.model.encoder, OptimizedModule) and not isinstance(wl.model, OptimizedModule)
        assert masks == [None, None]
    else:
        assert isinstance(wl.model, OptimizedModule)
    torch._dynamo.reset()


def test_compiled_training_through_runner(db_path):
    # The recipe that reached 328 sequences/s on the H200, at tiny size through the real runner:
    # inductor compiles the encoder, the first step (compilation) is timed apart and stored.
    (train,) = run_entries(db_path, [{"workload": "bert-large-train", "variants": ["sdpa+compile+fused-adamw"]}])
    assert_ok(train)
    assert train.params["compile_scope"] == "encoder"
    assert train.compile_s is not None and train.compile_s > 0
    assert train.compile_s > max(train.samples)   # compilation is not inside a timed window
