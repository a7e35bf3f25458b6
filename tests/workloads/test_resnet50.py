"""resnet50-train's documented FLOP count (src/gpuarena/workloads/resnet50_train/spec.py).  Its tiny runs are the
session's smoke run (tests/test_spine.py reads them)."""

from __future__ import annotations

import pytest


def test_resnet_flop_count_matches_flop_counter():
    """The documented 4.089 GMAC per 224x224 image agrees with torch's own FLOP counter (counted
    on the meta device: shapes only, no arithmetic)."""
    import torch
    import torchvision
    from torch.utils.flop_counter import FlopCounterMode

    with torch.device("meta"):
        model = torchvision.models.resnet50()
        x = torch.randn(1, 3, 224, 224)
    with FlopCounterMode(display=False) as counter:
        model(x)
    fwd = counter.get_total_flops()
    assert fwd == pytest.approx(2 * 4.089e9, rel=0.01)
