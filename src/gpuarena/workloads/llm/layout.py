"""How llm-train lays its ranks out: the parallel modes, the (data, tensor) degrees of a world,
the device mesh, and which linears tensor parallelism splits which way.

No torch at import: the degrees and the checks are asked before any run is created
(``LLMTrain.check_layout``).
"""

from __future__ import annotations

from gpuarena.errors import UserError

PARALLEL = ("none", "ddp", "fsdp", "tp", "fsdp+tp")
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
