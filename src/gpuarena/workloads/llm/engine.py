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
- weight-only int8 and int4 (weight_only.py): fewer bytes a weight for the decode to read.
- ``compile_prefill``: the prefill compiled with the prompt length marked dynamic, so a new
  prompt length reuses the compiled graph instead of compiling again.
- ``FlexDecodeAttention``: the one-token decode attention through FlexAttention, whose decode
  kernel splits the cache across the multiprocessors (gpt-fast's decode does the same).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from gpuarena.measure.profile import kernel_table
from gpuarena.workloads.llm.model import Attention, FeedForward, Llama, _sdpa_gqa
from gpuarena.workloads.llm.weight_only import one_row, realised


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
        h = F.silu(gate) * up
        if type(self.w2) is nn.Linear and one_row(h, self.w2.in_features):
            # a one-row step: inductor would recompute the SwiGLU product for every output row of the
            # down projection's reduction.  H200, llama3-8b (benchmarks/gemv.py, session 12): 45.6 us
            # fused, 29.3 us realised first.  (A quantised w2 realises its own input.)
            h = realised(h)
        return self.w2(h)


@torch.no_grad()
def fuse_projections(model: Llama) -> Llama:
    """Fuse every block's projections in place (the unfused weights are freed)."""
    for blk in model.layers:
        blk.attention = FusedAttention(blk.attention)
        blk.feed_forward = FusedFeedForward(blk.feed_forward)
    return model


def reduction_decode_attention(q, k, v, mask, pos=None):
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


class FlexDecodeAttention:
    """The new token's attention over a static cache through FlexAttention, gpt-fast's decode
    (pytorch-labs/gpt-fast ``decode_one_token``): a causal block mask over the whole cache is made
    once; each step takes the row of the block that holds ``pos`` (so only the cache blocks up to
    it are read) and a mask_mod offset by ``pos`` masks the rest of the last block.  Under
    torch.compile a query of one token goes to inductor's flex-decoding kernel, which splits the
    cache across the multiprocessors (split-KV): SDPA's kernels give a one-token query a handful of
    thread blocks (H200, session 6: cuDNN's at 16 us a layer for 2.3 MB of keys and values).  All
    sequences of the batch share ``pos`` (one request batch, as the static cache writes it)."""

    def __init__(self, max_len: int, device):
        from torch.nn.attention.flex_attention import create_block_mask

        def causal(b, h, q_idx, kv_idx):
            return q_idx >= kv_idx

        self.max_len = max_len
        self.full = create_block_mask(causal, None, None, max_len, max_len, device=device)

    def __call__(self, q, k, v, mask, pos):
        from torch.nn.attention.flex_attention import flex_attention

        if q.shape[2] != 1:
            return _sdpa_gqa(q, k, v, is_causal=False, mask=mask)
        offset = pos[0]

        def live(b, h, q_idx, kv_idx):      # the one query row sits at position ``offset``
            return kv_idx <= q_idx + offset

        row = self.full[:, :, pos // self.full.BLOCK_SIZE[0]]
        row.mask_mod = live
        row.seq_lengths = (1, self.max_len)
        gqa = q.shape[1] != k.shape[1]
        if q.device.type == "cpu":
            # inductor's CPU flex template reads the sizes of the query's underlying buffer, and a view
            # of the rotary embedding's 5-d buffer fails it (torch 2.14): a scaled copy is its own buffer
            scale = q.shape[-1] ** -0.5
            return flex_attention(q * scale, k, v, block_mask=row, scale=1.0, enable_gqa=gqa)
        return flex_attention(q, k, v, block_mask=row, enable_gqa=gqa)


def decode_attention(choice: str, compiled: bool) -> str:
    """llm-serve's ``decode_attention`` resolved: ``auto`` is flex when the decode is compiled (an
    eager flex_attention materialises the scores), else SDPA.  H200, llama3-8b, session 9: decode
    206.8 tokens/s with flex against 185.2 with SDPA at batch 1, 9,706 against 8,871 at batch 64."""
    if choice != "auto":
        return choice
    return "flex" if compiled else "sdpa"


def use_decode_attention(model: Llama, kind: str, max_len: int, device) -> None:
    """llm-serve's ``decode_attention``: ``sdpa`` (the model's own), ``flex`` or ``reduction``."""
    if kind == "sdpa":
        return
    attend = FlexDecodeAttention(max_len, device) if kind == "flex" else reduction_decode_attention
    for blk in model.layers:
        blk.attention.decode_attend = attend


def tune_inductor() -> dict:
    """gpt-fast's inductor settings; returns them, to be stored with the result."""
    import torch._inductor.config as ic

    ic.coordinate_descent_tuning = True
    ic.triton.unique_kernel_names = True
    return {"coordinate_descent_tuning": True}


def compile_prefill(fn, graphs: bool = False):
    """``fn(tokens, cache)`` compiled whole, the prompt length (dim 1) dynamic: one graph serves
    every prompt length above one (a length of one is specialised by dynamo, as always).

    ``graphs``: replayed as CUDA graphs (``mode="reduce-overhead"``; one recorded per prompt length),
    its outputs cloned out of the graph's pool.  Tried because the batch-1 prefill of 512 tokens ran
    11.5 ms of kernels in 13.6 ms (H200, session 13, benchmarks/prefill_b1.py); replayed as a graph it
    took 13.15 ms (554 TFLOP/s, no gain over the plain compiled prefill's 567 in session 11): the time
    between kernels is not launch overhead a graph removes."""
    compiled = torch.compile(fn, fullgraph=True, mode="reduce-overhead" if graphs else None)

    def prefill(tokens, cache):
        if tokens.shape[1] > 1:
            torch._dynamo.maybe_mark_dynamic(tokens, 1)
        out = compiled(tokens, cache)
        return tuple(t.clone() for t in out) if graphs else out

    return prefill


@torch.inference_mode()
def profile_request(prefill, decode, prompts, positions, cache, steps: int) -> dict:
    """One request's prefill, then its ``steps`` decode steps under the profiler (decode_profile)."""
    _, tok = prefill(prompts, cache)

    def run():
        t = tok
        for i in range(steps):
            t = decode(t, positions[i], cache).clone()
        return steps

    return decode_profile(run)


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
