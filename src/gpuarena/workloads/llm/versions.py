"""What each llm-serve version changed in the timed code, and so which results of earlier versions
no longer stand for today's engine recipe (issue 23).  Read from the diffs of the commits named
"llm-serve vN" and of the commits between them that touched workloads/llm/.

``CHANGES[w](variants, params)`` is true for a result of a version before ``w`` (its variant's parts,
its params as stored with ``batch_size`` the batch it timed) whose timed code version ``w`` changed.
A result none of the later versions changed was timed by today's code for its recipe, and the serving
curves (analysis/verbs/serving_curves.py) join it with today's results.  A recipe's decode attention and
prefill kind (eager, compiled) are in those curves' key, so a version that changed only which of them
a default picks changed no recipe's code.  Torch-free: analysis reads it (through the registry).

Not seen by a predicate: the device.  On a CPU, version 6 also left int8's input unrealised
(weight_only.realised is the identity there), which the table does not count.
"""

from __future__ import annotations

QUANTISED = frozenset({"int8-weights", "int4-weights", "fp8-weights"})   # a w2 that is not an nn.Linear


def _default_only(variants, params) -> bool:
    """A version that changed a default the curve key already tells apart."""
    return False


CHANGES = {
    # compiled prefill and coordinate-descent tuning under compile; a one-token prompt's prefill runs
    # causal; the static cache one buffer per layer (e3781aa, landed during v1: a v1 result may predate it)
    2: lambda v, p: "seed" not in v or p.get("prompt_len") == 1,
    # prefill=auto: quantised weights keep an eager prefill under compile (a default; the kind is keyed)
    3: _default_only,
    # decode_attention=auto: flex under compile (a default; the attention is keyed, SDPA's path unchanged)
    4: _default_only,
    # int8 linears read a realised input (weight_only.realised); int4-weights added
    5: lambda v, p: "int8-weights" in v,
    # fp8-weights: PyTorch's own FP8 (weight_only.Fp8Linear) in place of torchao's recipe
    6: lambda v, p: "fp8-weights" in v,
    # prefill=auto compiles FP8's prefill (a default; the kind is keyed)
    7: _default_only,
    # a one-row decode realises the SwiGLU product before an unquantised w2 (engine.FusedFeedForward); gemv added
    8: lambda v, p: "fused-proj" in v and not v & QUANTISED and p.get("batch_size") == 1,
    # gemv folds the QKV projection's RMSNorm and tiles bf16's 4,096-row matrices by one row; an eager
    # one-row step no longer realises the SwiGLU product (weight_only.one_row, e66151a); prefill=graph came
    # after it (c500a22, at v9: a new choice, the compiled prefill's default path unchanged)
    9: lambda v, p: "gemv" in v or ("fused-proj" in v and "compile" not in v and not v & QUANTISED
                                    and p.get("batch_size") == 1),
}
