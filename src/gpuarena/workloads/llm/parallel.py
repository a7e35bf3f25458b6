"""How llm-train lays a Llama model over a device mesh, in torchtitan's order.

build on meta -> FP8 linears (torchao) -> tensor parallelism (DTensor) -> activation
checkpointing -> per-block torch.compile -> FSDP2 (per block, then the root) ->
materialise (``to_empty`` + ``init_weights``).  Each step is a function so the order
is visible in train.py; none of them times anything.

Exposed communication (``comm_timeline``): FSDP2 has no ``no_sync()`` that leaves
the rest of the step unchanged (its all-gathers are the forward pass's inputs), so
the ddp-train method (a no-sync window against a normal one) does not carry over.
Instead the profiler's timeline of a few steps is read: communication intervals
(NCCL kernels on the GPU, gloo operations on the CPU) against compute intervals
(every other GPU kernel; on the CPU the operators of the training thread), and the
part of the communication during which no compute runs is the exposed share.
"""

from __future__ import annotations

import torch
from torch import nn

from gpuarena.errors import UserError, WorkloadSkipped

PARALLEL = ("none", "ddp", "fsdp", "tp", "fsdp+tp")
FP8_MIN_CAPABILITY = (8, 9)   # FP8 tensor cores: Ada (sm89) and Hopper (sm90) onwards
# Column-wise (output features split) and row-wise (input features split) linears of a block.
COLWISE = ("attention.wq", "attention.wk", "attention.wv", "feed_forward.w1", "feed_forward.w3")
ROWWISE = ("attention.wo", "feed_forward.w2")


def layout(parallel: str, tp: int, world: int) -> tuple[int, int]:
    """(data-parallel degree, tensor-parallel degree) for a world of ``world`` ranks.
    ``tp`` 0 means every rank for parallel=tp, else it must be given for fsdp+tp."""
    if parallel == "none":
        if world > 1:
            raise UserError(f"llm-train parallel=none runs on one rank, not {world}: "
                            "--set parallel=ddp|fsdp|tp|fsdp+tp")
        return 1, 1
    if parallel in ("ddp", "fsdp"):
        if tp > 1:
            raise UserError(f"tp={tp} needs parallel=tp or fsdp+tp, not {parallel}")
        return world, 1
    degree = (tp or world) if parallel == "tp" else tp
    if not degree:
        raise UserError("parallel=fsdp+tp needs --set tp=N (the tensor-parallel degree)")
    if world % degree or (parallel == "tp" and degree != world):
        raise UserError(f"tp={degree} does not divide {world} ranks"
                        + (" (parallel=tp uses every rank: tp must equal the world size)" if parallel == "tp" else ""))
    return world // degree, degree


def check_tp(cfg, degree: int) -> None:
    if degree > 1 and (cfg.n_heads % degree or cfg.n_kv_heads % degree or cfg.ffn_dim % degree):
        raise UserError(f"tp={degree}: heads {cfg.n_heads}, KV heads {cfg.n_kv_heads} and FFN {cfg.ffn_dim} "
                        "must all divide by the tensor-parallel degree")


def make_mesh(device, dp: int, tp: int):
    from torch.distributed.device_mesh import init_device_mesh

    if dp > 1 and tp > 1:
        return init_device_mesh(device.type, (dp, tp), mesh_dim_names=("dp", "tp"))
    return init_device_mesh(device.type, (dp * tp,), mesh_dim_names=("tp" if tp > 1 else "dp",))


# --- FP8 -------------------------------------------------------------------------------

def require_fp8(device) -> None:
    """FP8 training needs FP8 tensor cores and torchao; otherwise the case is skipped, never
    run at another precision."""
    if device.type != "cuda":
        raise WorkloadSkipped(f"fp8 needs a CUDA GPU of compute capability "
                              f"{FP8_MIN_CAPABILITY[0]}.{FP8_MIN_CAPABILITY[1]}+; this case runs on {device.type}")
    cap = torch.cuda.get_device_capability(device)
    if tuple(cap) < FP8_MIN_CAPABILITY:
        raise WorkloadSkipped(f"fp8 needs compute capability 8.9+ (Ada, Hopper); this GPU is {cap[0]}.{cap[1]}")
    try:
        import torchao.float8  # noqa: F401
    except ImportError as e:
        raise WorkloadSkipped(f"fp8 needs torchao (pip install torchao): {e}") from None


def fp8_eligible(tp: int):
    """torchao's filter: every linear but the output head, whose sharded dims divide by 16
    (FP8 GEMMs on the tensor cores need multiples of 16)."""
    def keep(mod: nn.Module, fqn: str) -> bool:
        if fqn == "output" or not isinstance(mod, nn.Linear):
            return False
        colwise = fqn.endswith(tuple(COLWISE))
        out_f = mod.out_features // tp if colwise else mod.out_features
        in_f = mod.in_features // tp if fqn.endswith(tuple(ROWWISE)) else mod.in_features
        return out_f % 16 == 0 and in_f % 16 == 0
    return keep


def convert_fp8(model: nn.Module, tp: int, fsdp: bool) -> int:
    """Swap eligible linears for torchao Float8Linear (tensorwise dynamic scaling); returns how many."""
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training

    keep = fp8_eligible(tp)
    n = sum(1 for fqn, m in model.named_modules() if keep(m, fqn))
    # FSDP2 all-gathers FP8 weights instead of bf16 ones when this is on (torchtitan's default).
    convert_to_float8_training(model, module_filter_fn=keep,
                               config=Float8LinearConfig(enable_fsdp_float8_all_gather=fsdp))
    return n


# --- tensor parallelism, checkpointing, compile, FSDP -----------------------------------

def apply_tp(model: nn.Module, tp_mesh, fp8: bool) -> None:
    """Megatron-style: Q/K/V and the gate/up projections split by output features, the output
    and down projections by input features; one all-reduce after each of attention and FFN."""
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    if fp8:
        from torchao.float8.float8_tensor_parallel import Float8ColwiseParallel, Float8RowwiseParallel

        ColwiseParallel, RowwiseParallel = Float8ColwiseParallel, Float8RowwiseParallel  # noqa: N806
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
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if bf16 else MixedPrecisionPolicy()
    for i, block in enumerate(model.layers):
        # the last block's parameters are gathered again at once for backward: keep them
        fully_shard(block, mesh=dp_mesh, mp_policy=mp, reshard_after_forward=i < len(model.layers) - 1)
    fully_shard(model, mesh=dp_mesh, mp_policy=mp)


def materialise(model: nn.Module, device) -> None:
    model.to_empty(device=device)
    model.init_weights()


# --- exposed communication --------------------------------------------------------------

_COMM = ("nccl", "gloo", "c10d", "record_param_comms", "wait")


def _union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def _length(intervals) -> float:
    return sum(b - a for a, b in intervals)


def _overlap(xs, ys) -> float:
    """Total length of the intersection of two sorted disjoint interval lists."""
    i = j = 0
    total = 0.0
    while i < len(xs) and j < len(ys):
        lo, hi = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        total += max(0.0, hi - lo)
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return total


STEP_LABEL = "gpuarena.llm_step"   # a record_function around each profiled step


def comm_timeline(prof, cuda: bool) -> tuple[float, float]:
    """(communication seconds, exposed communication seconds) over a profile whose steps ran
    under record_function(STEP_LABEL); on the CPU that label names the training thread."""
    events = prof.events()
    compute_thread = next((e.thread for e in events if e.name == STEP_LABEL), None)
    comm, compute = [], []
    for e in events:
        name = e.name.lower()
        span = (e.time_range.start, e.time_range.end)
        if cuda:
            if e.device_type != torch.autograd.DeviceType.CUDA:
                continue
            (comm if "nccl" in name else compute).append(span)
        elif name.startswith("gloo:"):
            comm.append(span)
        elif name.startswith("aten::") and e.thread == compute_thread and not any(c in name for c in _COMM):
            compute.append(span)
    comm_u, compute_u = _union(comm), _union(compute)
    total = _length(comm_u)
    return total / 1e6, (total - _overlap(comm_u, compute_u)) / 1e6
