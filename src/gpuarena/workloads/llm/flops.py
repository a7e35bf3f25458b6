"""The decoder's arithmetic: parameters, model FLOPs and the bytes a decode step reads.

Pure functions of a decoder's shape ``cfg`` (shapes.py's ``LlamaConfig``, or anything with its
fields), no torch: the workloads report these figures, and analysis (the training plan, the
serving model, the claim checks) asks the same formulas without building a model.  shapes.py
imports this module (a config refuses a parameter count beyond any decoder), not the reverse.
"""

from __future__ import annotations


def param_counts(cfg) -> tuple[int, int]:
    """(all parameters, all but the input embedding table).  The output head is a matmul and
    counts as compute; the embedding is a lookup (torchtitan's convention)."""
    kv = cfg.n_kv_heads * cfg.head_dim
    per_layer = 2 * cfg.dim * cfg.dim + 2 * cfg.dim * kv + 3 * cfg.dim * cfg.ffn_dim + 2 * cfg.dim
    embedding = cfg.vocab_size * cfg.dim
    total = embedding + cfg.n_layers * per_layer + cfg.dim + cfg.vocab_size * cfg.dim
    return total, total - embedding


def flops_per_token(cfg, seq_len: int, training: bool) -> float:
    """Model FLOPs per token: 6 N + 12 L H T for a training step, 2 N + 4 L H T forward only
    (N = parameters without the embedding table; attention counted without causal halving, as
    PaLM's MFU definition and torchtitan do).  Recomputation under checkpointing is not counted:
    MFU is model FLOPs, not hardware FLOPs."""
    _, n = param_counts(cfg)
    per = 3 if training else 1
    return float(per * (2 * n + 4 * cfg.n_layers * cfg.dim * seq_len))


def kv_cache_bytes(cfg, batch: int, context: int, bytes_per_value: int = 2) -> int:
    """Bytes of keys and values for ``batch`` sequences of ``context`` tokens."""
    return 2 * cfg.n_layers * batch * context * cfg.n_kv_heads * cfg.head_dim * bytes_per_value


def decode_bytes_per_step(cfg, batch: int, context: int, weight_bytes: float = 2,
                          kv_bytes: int = 2) -> float:
    """Bytes one decode step must read from memory: every weight but the embedding table (a
    lookup of ``batch`` rows) once, plus the keys and values of ``context`` tokens of each
    sequence.  Activations are ignored (kilobytes per sequence).  ``weight_bytes`` per parameter:
    2 for bf16, about 1 for FP8 weights."""
    _, n = param_counts(cfg)
    return n * weight_bytes + batch * cfg.dim * weight_bytes + kv_cache_bytes(cfg, batch, context, kv_bytes)


def prefill_flops(cfg, prompt_len: int) -> float:
    """Model FLOPs of one sequence's prefill: every prompt token through the blocks, and the
    output head for the last token only (the serving prefill computes no other logits)."""
    head = 2.0 * cfg.vocab_size * cfg.dim
    return prompt_len * flops_per_token(cfg, prompt_len, training=False) - (prompt_len - 1) * head


def request_flops(cfg, prompt_len: int, new_tokens: int) -> float:
    """Model FLOPs of one sequence's request: its prefill, then decode steps at contexts
    prompt_len + 1 .. prompt_len + new_tokens - 1 (one token each)."""
    decode = sum(flops_per_token(cfg, prompt_len + i, training=False) for i in range(1, new_tokens))
    return prefill_flops(cfg, prompt_len) + decode


def decode_figures(cfg, batch: int, prompt_len: int, new_tokens: int, ttft: float, tpot: float,
                   per_weight: float, kv_elem: int) -> dict:
    """What a measured request's TTFT and time per output token (seconds, medians) come to:
    prefill tokens/s and TFLOP/s, decode tokens/s, and the bytes a decode step reads (weights at
    ``per_weight`` bytes each, as measured in memory, plus the live KV at the mean context) over
    the time per token: the decode's memory bandwidth."""
    context = prompt_len + new_tokens / 2            # the mean live context over the decode steps
    moved = decode_bytes_per_step(cfg, batch, round(context), per_weight, kv_elem)
    return {
        "ttft_s": ttft, "prefill_tokens_per_s": batch * prompt_len / ttft,
        "prefill_tflops": prefill_flops(cfg, prompt_len) * batch / ttft / 1e12,
        "tpot_ms_median": tpot * 1e3, "decode_tokens_per_s": batch / tpot, "decode_context_mean": context,
        "kv_cache_live_bytes": kv_cache_bytes(cfg, batch, prompt_len + new_tokens, kv_elem),
        "decode_bytes_per_step": moved, "decode_bandwidth_gbs": moved / tpot / 1e9,
        "bytes_model": "weights read once per step (embedding table excluded) + live KV at the mean context",
    }
