"""The decoder shapes a training plan knows: the workloads' shapes plus planning-only ones (no
workload runs them), which the published runs of data/training_mfu.csv name."""

from __future__ import annotations

from gpuarena.errors import UserError, brief
from gpuarena.workloads.llm.shapes import SHAPES, LlamaConfig

# Planning-only shapes (no workload runs them): Llama 3 405B (Dubey et al. 2024, "The Llama 3 Herd
# of Models", table 3: 126 layers, 16384 wide, FFN 53248, 128 heads, 8 KV heads, vocab 128256);
# Llama 2 7B, 13B and 70B, for the published runs of data/training_mfu.csv, are the serving shapes
# (workloads/llm/shapes.py, with their sources).
PLAN_SHAPES: dict[str, LlamaConfig] = {
    **SHAPES,
    "llama3-405b": LlamaConfig(dim=16384, n_layers=126, n_heads=128, n_kv_heads=8, ffn_dim=53248,
                               vocab_size=128256),
}


def model_config(name: str) -> LlamaConfig:
    if name not in PLAN_SHAPES:
        raise UserError(f"--model: no shape {brief(name)}; known shapes {', '.join(PLAN_SHAPES)}")
    return PLAN_SHAPES[name]
