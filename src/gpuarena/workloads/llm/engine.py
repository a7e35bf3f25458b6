"""The serving engine's speed recipe (issue 23), applied to a built ``Llama`` (model.py).

gpt-fast's (pytorch-labs/gpt-fast, model.py, generate.py and quantize.py) and torchao's
``_models/llama`` loop reach more of the memory bandwidth in decode than a compiled plain
model because of a few things, each here and each testable on the CPU:

- ``fuse_projections``: the query, key and value projections become one matmul (``wqkv``) and
  the gate and up projections another (``w13``): one weight read, one kernel, instead of three
  and two.  The output is the unfused one up to summation order.
- ``tune_inductor``: inductor's ``coordinate_descent_tuning``.  With it on, inductor also
  rewrites a matmul with one row (the batch-1 decode's every linear layer) as a multiply and a
  sum that it generates and tunes itself, which reads the weights near the copy bandwidth
  (torch/_inductor/decomposition.py, ``mm``: "Our matrix vector multiplies only achieve peak
  bandwidth with coordinate descent tuning").
- ``quantize_int8_weights``: gpt-fast's weight-only int8 (``WeightOnlyInt8Linear``): int8
  weights with one scale per output channel, dequantised inside the matmul; in the batch-1
  decode inductor fuses the int8 -> bf16 conversion into that multiply-and-sum, so each weight
  is read as one byte.  Activations stay in bf16.
- ``compile_prefill``: the prefill compiled with the prompt length marked dynamic, so a new
  prompt length reuses the compiled graph instead of compiling again.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from gpuarena.measure.profile import kernel_table
from gpuarena.workloads.llm.model import Attention, FeedForward, Llama, _sdpa_gqa


def _linear(weight: torch.Tensor) -> nn.Linear:
    """An ``nn.Linear`` around an existing weight (no new allocation, no initialisation)."""
    lin = nn.Linear(weight.shape[1], weight.shape[0], bias=False, device="meta")
    lin.weight = nn.Parameter(weight, requires_grad=False)
    return lin


class FusedAttention(Attention):
    """``Attention`` with ``wq``, ``wk`` and ``wv`` concatenated into one ``wqkv`` matmul."""

    def __init__(self, att: Attention):
        nn.Module.__init__(self)        # Attention.__init__ would allocate four new matrices
        self.head_dim = att.head_dim
        self.sizes = [att.wq.out_features, att.wk.out_features, att.wv.out_features]
        self.wqkv = _linear(torch.cat([att.wq.weight, att.wk.weight, att.wv.weight]).detach())
        self.wo = att.wo

    def qkv(self, x):
        return self.wqkv(x).split(self.sizes, dim=-1)


class FusedFeedForward(FeedForward):
    """``FeedForward`` with the gate (``w1``) and up (``w3``) projections in one ``w13`` matmul."""

    def __init__(self, ff: FeedForward):
        nn.Module.__init__(self)
        self.w13 = _linear(torch.cat([ff.w1.weight, ff.w3.weight]).detach())
        self.w2 = ff.w2

    def forward(self, x):
        gate, up = self.w13(x).chunk(2, dim=-1)
        return self.w2(F.silu(gate) * up)


@torch.no_grad()
def fuse_projections(model: Llama) -> Llama:
    """Fuse every block's projections in place (the unfused weights are freed)."""
    for blk in model.layers:
        blk.attention = FusedAttention(blk.attention)
        blk.feed_forward = FusedFeedForward(blk.feed_forward)
    return model


class Int8WeightOnlyLinear(nn.Module):
    """int8 weights, one scale per output channel (symmetric), activations in their own dtype."""

    def __init__(self, lin: nn.Linear):
        super().__init__()
        w = lin.weight.detach()
        scales = w.abs().amax(dim=1).float().clamp(min=1e-12) / 127.0
        q = torch.round(w.float() / scales[:, None]).clamp(-127, 127).to(torch.int8)
        self.register_buffer("weight", q)
        self.register_buffer("scales", scales.to(w.dtype))
        self.in_features, self.out_features = lin.in_features, lin.out_features

    def forward(self, x):
        return F.linear(x, self.weight.to(x.dtype)) * self.scales


@torch.no_grad()
def quantize_int8_weights(model: nn.Module) -> str:
    """Replace every ``nn.Linear`` (the output head too, as gpt-fast does) with its int8 form."""
    for _name, mod in list(model.named_modules()):
        for child_name, child in list(mod.named_children()):
            if type(child) is nn.Linear:
                setattr(mod, child_name, Int8WeightOnlyLinear(child))
    return "int8 weight-only, per-channel symmetric scales (gpt-fast WeightOnlyInt8Linear)"


def reduction_decode_attention(q, k, v, mask):
    """Attention of one new token over the cache written as multiplies, sums and a softmax, with
    no attention kernel: under torch.compile inductor generates and tunes its own reductions for
    it (the H200 profile of session 6 had cuDNN's SDPA kernel at 16 us a layer for 75 MB of keys
    and values a step at batch 1).  q [b, heads, 1, hd]; k, v [b, kv_heads, L, hd]; mask
    broadcastable to [b, kv_heads, group, L].  Other query lengths go to SDPA."""
    b, h, t, d = q.shape
    g = k.shape[1]
    if t != 1 or h % g:
        return _sdpa_gqa(q, k, v, is_causal=False, mask=mask)
    qg = q.reshape(b, g, h // g, d).float()        # query head i reads key/value head i // (h / g)
    scores = (qg.unsqueeze(3) * k.float().unsqueeze(2)).sum(-1) * d ** -0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    p = scores.softmax(-1)
    out = (p.unsqueeze(-1) * v.float().unsqueeze(2)).sum(3)
    return out.reshape(b, h, 1, d).to(q.dtype)


def use_reduction_attention(model: Llama) -> None:
    """Every block's decode attention becomes ``reduction_decode_attention``."""
    for blk in model.layers:
        blk.attention.decode_attend = reduction_decode_attention


def tune_inductor() -> dict:
    """gpt-fast's inductor settings; returns them, to be stored with the result."""
    import torch._inductor.config as ic

    ic.coordinate_descent_tuning = True
    ic.triton.unique_kernel_names = True
    return {"coordinate_descent_tuning": True}


def compile_prefill(fn):
    """``fn(tokens, cache)`` compiled whole, the prompt length (dim 1) dynamic: one graph serves
    every prompt length above one (a length of one is specialised by dynamo, as always)."""
    compiled = torch.compile(fn, fullgraph=True)

    def prefill(tokens, cache):
        if tokens.shape[1] > 1:
            torch._dynamo.maybe_mark_dynamic(tokens, 1)
        return compiled(tokens, cache)

    return prefill


def decode_profile(run, top: int = 8) -> dict:
    """Kernel times of ``run()`` (some decode steps) under the profiler: the costliest kernels
    with their share of the kernel time, and the kernel time itself (measure/profile.py reads it)."""
    from torch.profiler import ProfilerActivity, profile

    # device activity alone: an operator's own device time would count its kernels twice
    acts = [ProfilerActivity.CUDA] if torch.cuda.is_available() else [ProfilerActivity.CPU]
    with profile(activities=acts) as prof:
        steps = run()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    return kernel_table(prof, steps, top)
