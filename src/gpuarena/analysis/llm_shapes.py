"""The decoder shapes a training plan knows: the workloads' shapes plus planning-only ones (no
workload runs them), which the published runs of data/training_mfu.csv name."""

from __future__ import annotations

from gpuarena.errors import UserError, brief
from gpuarena.workloads.llm.shapes import SHAPES, LlamaConfig

# Planning-only shapes (no workload runs them): Llama 3 405B (Dubey et al. 2024, "The Llama 3 Herd
# of Models", table 3: 126 layers, 16384 wide, FFN 53248, 128 heads, 8 KV heads, vocab 128256);
# Llama 2 7B, 13B, 70B (Touvron et al. 2023, table 1: 4k context, GQA for 70B; the widths, FFN and
# heads of meta-llama/Llama-2-*-hf config.json), for the published runs of data/training_mfu.csv.
PLAN_SHAPES: dict[str, LlamaConfig] = {
    **SHAPES,
    "llama3-405b": LlamaConfig(dim=16384, n_layers=126, n_heads=128, n_kv_heads=8, ffn_dim=53248,
                               vocab_size=128256),
    "llama2-7b": LlamaConfig(dim=4096, n_layers=32, n_heads=32, n_kv_heads=32, ffn_dim=11008, vocab_size=32000,
                             max_seq_len=4096, rope_theta=10000.0),
    "llama2-13b": LlamaConfig(dim=5120, n_layers=40, n_heads=40, n_kv_heads=40, ffn_dim=13824, vocab_size=32000,
                              max_seq_len=4096, rope_theta=10000.0),
    "llama2-70b": LlamaConfig(dim=8192, n_layers=80, n_heads=64, n_kv_heads=8, ffn_dim=28672, vocab_size=32000,
                              max_seq_len=4096, rope_theta=10000.0),
}


def model_config(name: str) -> LlamaConfig:
    if name not in PLAN_SHAPES:
        raise UserError(f"--model: no shape {brief(name)}; known shapes {', '.join(PLAN_SHAPES)}")
    return PLAN_SHAPES[name]
