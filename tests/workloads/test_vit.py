"""vit-b16-infer: its FLOP and parameter formulas against torch's counter and the built model, and tiny
runs through the real runner (docs/workloads.md adds it as the example of a built-in)."""

from __future__ import annotations

import pytest

from gpuarena.errors import UserError
from gpuarena.workloads import registry
from tests.workloads.conftest import assert_ok, run_entries


def test_flops_and_params_match_the_built_model():
    """17.56 G multiply-adds at 224 px (torchvision's documented GFLOPS of ViT_B_16_Weights, counted as
    multiply-adds), counted here on the meta device (shapes only, no arithmetic); 86,567,656 parameters
    (its num_params); both formulas hold at another size too."""
    import torch
    import torchvision
    from torch.utils.flop_counter import FlopCounterMode

    spec = registry.get("vit-b16-infer")
    for size in (224, 64):
        p = spec.resolve_params({"image_size": size})
        with torch.device("meta"):
            model = torchvision.models.vit_b_16(image_size=size).eval()
            x = torch.randn(1, 3, size, size)
        with FlopCounterMode(display=False) as counter, torch.inference_mode():
            model(x)
        assert spec.flops(p) == pytest.approx(counter.get_total_flops(), rel=1e-5)
        assert spec.param_count(p) == sum(t.numel() for t in model.parameters())
    p224 = spec.resolve_params({})
    assert spec.flops(p224) == pytest.approx(2 * 17.56e9, rel=1e-3)
    assert spec.param_count(p224) == 86_567_656


def test_an_image_size_off_the_patch_grid_is_refused():
    spec = registry.get("vit-b16-infer")
    with pytest.raises(UserError, match="multiple of 16"):
        spec.check_params(spec.resolve_params({"image_size": 40}))


def test_tiny_runs_through_the_runner(db_path):
    seed, amp = run_entries(db_path, [
        {"workload": "vit-b16-infer", "variants": ["seed", "amp-bf16+channels-last"]},
    ], repeats=2)
    for r in (seed, amp):
        assert_ok(r)
        assert r.unit == "images/s" and r.items_per_step == 2
        assert r.flops_per_item == pytest.approx(registry.get("vit-b16-infer").flops({"image_size": 32}))
        assert r.extra.tokens == 5 and r.undeclared == []
    assert seed.extra.dtype == "float32" and seed.precision == "default"   # PyTorch's own rules, as for every seed
    assert amp.precision == "bf16"
