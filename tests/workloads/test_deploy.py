"""Deployment paths refuse, with their one-line cause, where they cannot run (workloads/deploy.py)."""

from __future__ import annotations

import sys

import pytest
import torch

from gpuarena.errors import UserError, WorkloadSkipped
from gpuarena.workloads import deploy
from gpuarena.workloads.resnet50_infer import ResNet50Infer


def test_tensorrt_missing_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_tensorrt", None)
    with pytest.raises(WorkloadSkipped, match=r"^torch_tensorrt is not installed: pip install torch-tensorrt"):
        deploy.tensorrt_ready(torch.device("cuda"))


def test_a_cuda_graph_needs_cuda_and_stands_apart_from_the_compilers():
    with pytest.raises(WorkloadSkipped, match="cuda-graph captures CUDA work; this is a CPU"):
        deploy.graph_ready(torch.device("cpu"))
    for spec in ("compile+cuda-graph", "aot-inductor+cuda-graph", "tensorrt+cuda-graph"):
        with pytest.raises(UserError, match="exclude each other"):
            ResNet50Infer.parse_variant(spec)
    assert ResNet50Infer.canonical_variant("cuda-graph+cudnn-fused+bf16+channels-last") == \
        "bf16+channels-last+cudnn-fused+cuda-graph"
