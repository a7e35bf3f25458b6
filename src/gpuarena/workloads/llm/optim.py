"""llm-train's optimizer: AdamW, fused where the parameters allow it."""

from __future__ import annotations

import torch


class _Optimizers:
    """Several optimizers stepped as one (see adamw)."""

    def __init__(self, opts):
        self.opts = opts

    def zero_grad(self, set_to_none: bool = True) -> None:
        for o in self.opts:
            o.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        for o in self.opts:
            o.step()


def adamw(params, lr: float, fused: bool):
    """AdamW over the model's parameters.  Fused AdamW refuses a mix of DTensor and plain
    tensors in one call (tensor parallelism shards the linears and leaves norms and embeddings
    plain: "_fused_adamw_: got mixed torch.Tensor and DTensor", seen on two H200s), so under
    that mix each kind gets its own fused optimizer: the same update, one kernel per kind."""
    params = [p for p in params if p.requires_grad]
    if not fused:
        return torch.optim.AdamW(params, lr=lr)
    from torch.distributed.tensor import DTensor

    kinds = [[p for p in params if isinstance(p, DTensor)], [p for p in params if not isinstance(p, DTensor)]]
    kinds = [k for k in kinds if k]
    if len(kinds) == 1:
        return torch.optim.AdamW(params, lr=lr, fused=True)
    return _Optimizers([torch.optim.AdamW(k, lr=lr, fused=True) for k in kinds])
