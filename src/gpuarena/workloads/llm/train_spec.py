"""llm-train's facts (torch-free): the spec of training a Llama-style decoder; train.py is its body
(the module docstring there describes the layouts and precision recipes)."""

from __future__ import annotations

import os
from typing import Optional

from pydantic import Field

from gpuarena.errors import UserError
from gpuarena.store.figures import Count, Name, Ranks, Rate, Record, Seconds, Text
from gpuarena.workloads.figures import Communication
from gpuarena.workloads.llm import layout as lay
from gpuarena.workloads.llm.flops import flops_per_token, param_counts
from gpuarena.workloads.llm.shapes import SHAPES, resolve_shape
from gpuarena.workloads.precision import precision_of
from gpuarena.workloads.spec import Param, WorkloadSpec

PRECISIONS = frozenset({"seed", "tf32", "amp-bf16", "bf16"})


class LLMTrainFigures(Communication):
    shape: Name = None                       # the model shape's name, or the hf_config file
    params_total: Count = None
    params_non_embedding: Count = None
    parallel: Name = None
    dp_degree: Ranks = None
    tp_degree: Ranks = None
    mesh_shape: Optional[list[int]] = Field(None, max_length=8)
    fp8_linears: Count = None
    fused_adamw: Optional[bool] = None
    loss_first: Optional[float] = None
    loss_last: Optional[float] = None
    flops_formula: Text = None
    executed_precision: Record = None
    comm_profiled_s: Seconds = None
    comm_method: Text = None
    tokens_per_s_per_gpu: Rate = None


class LLMTrainSpec(WorkloadSpec):
    name = "llm-train"
    runner = "gpuarena.workloads.llm.train:LLMTrain"
    figures = LLMTrainFigures
    version = 1
    description = "Llama-style decoder training (causal LM, AdamW) with DDP, FSDP2, TP and FP8"
    item = "token"
    unit = "tokens/s"
    source = "article 001 (FP8 and the Transformer Engine, DeviceMesh, gradient checkpointing, 175B claims)"
    launcher = "torchrun"
    rank_extra = ("comm_total_s", "comm_exposed_s", "loss_last")
    # Class facts of the typed spine (issue 14); plain attributes until the base class has them.
    kind = "training"
    physics = "decoder-training"
    axis = "batch_size"
    rank_aggregate = "sum"
    published_as = ("llm training", "gpt-3 175b", "gpt3-175b", "175b training", "llama training")
    dominant_op = "matmul"
    params = (
        Param("shape", str, "llama-1b", "named model shape (llm/shapes.py SHAPES)", tiny="tiny",
              choices=tuple(SHAPES)),
        Param("hf_config", str, "", "path of a Hugging Face config.json to use instead of shape"),
        Param("seq_len", int, 2048, "tokens per sequence", tiny=32, min=2, max=1 << 20),
        Param("batch_size", int, 4, "sequences per data-parallel rank per step", tiny=2, min=1, max=65536),
        Param("parallel", str, "none", "how ranks share the model", choices=lay.PARALLEL),
        Param("tp", int, 0, "tensor-parallel degree (mesh [world/tp, tp]); 0: all ranks under parallel=tp",
              min=0, max=1024),
        Param("lr", float, 3e-4, "AdamW learning rate", min=0.0, max=1.0),
    )
    variants = {
        "seed": "FP32 (TF32 off), eager, AdamW (foreach)",
        "tf32": "TF32 matmuls",
        "amp-bf16": "bf16 autocast, FP32 weights and optimizer state",
        "bf16": "bf16 weights (FSDP2: bf16 compute over FP32 master shards); see the module docstring",
        "fp8": "torchao.float8 FP8 linears (not the output head); CUDA sm89+ and torchao, else skipped",
        "compile": "per-block torch.compile (torchtitan's recipe)",
        "activation-checkpointing": "recompute each block in backward (non-reentrant checkpoint)",
        "fused-adamw": "AdamW(fused=True)",
    }
    exclusive = (frozenset({"tf32", "amp-bf16", "bf16"}),)
    default_warmup = 3
    default_steps = 10

    # --- parameters and class facts (no model built) ----------------------------------
    @classmethod
    def resolve_params(cls, given: dict, size: str = "full") -> dict:
        """Also read hf_config now, so a bad path fails before any run is created."""
        out = super().resolve_params(given, size)
        if out["hf_config"]:
            if not os.path.exists(out["hf_config"]):
                raise UserError(f"hf_config {out['hf_config']}: no such file")
            if not os.path.isfile(out["hf_config"]):
                raise UserError(f"hf_config {out['hf_config']}: not a file (give the config.json)")
        cfg = resolve_shape(out["shape"], out["hf_config"])
        if out["seq_len"] > cfg.max_seq_len:
            raise UserError(f"seq_len={out['seq_len']}: the model's positions stop at {cfg.max_seq_len}")
        return out

    @classmethod
    def check_layout(cls, params: dict, gpus: int) -> None:
        """Refuse a layout that cannot run on `gpus` ranks before the run is created."""
        _, tp = lay.layout(params["parallel"], params["tp"], gpus)
        lay.check_tp(cls.config(params), tp)

    @classmethod
    def config(cls, params: dict):
        return resolve_shape(params.get("shape", "llama-1b"), params.get("hf_config", ""))

    @classmethod
    def flops(cls, params: dict) -> float:
        """Training FLOPs per token (6 N + 12 L H T)."""
        return flops_per_token(cls.config(params), params.get("seq_len", 2048), training=True)

    @classmethod
    def param_count(cls, params: dict) -> int:
        return param_counts(cls.config(params))[0]

    @classmethod
    def executed_precision(cls, variants, arch=None, params=None) -> dict[str, str]:
        """What each kind of arithmetic runs at under a recipe: FP8 covers the linears only
        (attention's SDPA and the output head stay at the recipe's precision)."""
        base = precision_of(frozenset(variants))
        base = "fp32" if base == "default" else base
        elementwise = "bf16" if "bf16" in variants else "fp32"
        matmul = "fp8" if "fp8" in variants else base
        attention = "bf16" if "fp8" in variants and base == "fp32" else base
        return {"matmul": matmul, "attention": attention, "elementwise": elementwise}
