"""How llm-train's model is spread and wrapped, in torchtitan's order, each step a function so
the order is visible in train.py and none of them times anything:

build on meta -> FP8 linears (fp8.py) -> tensor parallelism (DTensor) -> activation
checkpointing -> per-block torch.compile -> FSDP2 (per block, then the root) ->
materialise (``to_empty`` + ``init_weights``).
"""

from __future__ import annotations

import torch
from torch import nn

from gpuarena.workloads.llm import fp8
from gpuarena.workloads.llm.layout import COLWISE, ROWWISE


def apply_tp(model: nn.Module, tp_mesh, fp8_linears: bool) -> None:
    """Megatron-style: Q/K/V and the gate/up projections split by output features, the output
    and down projections by input features; one all-reduce after each of attention and FFN."""
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    if fp8_linears:
        ColwiseParallel, RowwiseParallel = fp8.tp_styles()  # noqa: N806
    plan = {**{n: ColwiseParallel() for n in COLWISE}, **{n: RowwiseParallel() for n in ROWWISE}}
    for block in model.layers:
        parallelize_module(block, tp_mesh, plan)


def apply_checkpointing(model: nn.Module) -> None:
    """Each block's activations recomputed in backward (non-reentrant torch.utils.checkpoint)."""
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointImpl, checkpoint_wrapper

    for i, block in enumerate(model.layers):
        model.layers[i] = checkpoint_wrapper(block, checkpoint_impl=CheckpointImpl.NO_REENTRANT,
                                             preserve_rng_state=False)


def apply_compile(model: nn.Module) -> None:
    """Per-block torch.compile (torchtitan's choice): every block has one graph, compiled once."""
    for i, block in enumerate(model.layers):
        model.layers[i] = torch.compile(block)


def fully_shard_fn():
    try:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    except ImportError:   # torch < 2.6 kept FSDP2 under _composable
        from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard
    return fully_shard, MixedPrecisionPolicy


def apply_fsdp(model: nn.Module, dp_mesh, bf16: bool) -> None:
    """FSDP2 per block, then the root (embedding, norm, head).  bf16: parameters gathered and
    computed in bf16, gradients reduced in FP32, the sharded FP32 parameters are the master copy."""
    fully_shard, MixedPrecisionPolicy = fully_shard_fn()  # noqa: N806
    mp = (MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if bf16
          else MixedPrecisionPolicy())
    for i, block in enumerate(model.layers):
        # the last block's parameters are gathered again at once for backward: keep them
        fully_shard(block, mesh=dp_mesh, mp_policy=mp, reshard_after_forward=i < len(model.layers) - 1)
    fully_shard(model, mesh=dp_mesh, mp_policy=mp)


def materialise(model: nn.Module, device) -> None:
    model.to_empty(device=device)
    model.init_weights()
