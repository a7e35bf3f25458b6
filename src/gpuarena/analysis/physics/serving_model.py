"""The serving model: what every verb (check, advise, the report) asks about LLM serving.

- decode, per step of ``batch`` sequences at ``context`` tokens, on ``tp`` GPUs:
  max(bytes read / (bandwidth x decode share), FLOPs / (peak x efficiency)) + the all-reduces.
  Bytes = every non-embedding weight at its precision once + each sequence's KV cache at the
  context (workloads/llm/flops.py's decode_bytes_per_step), split over the tensor-parallel ranks
  (KV over at most n_kv_heads of them: beyond that the heads are replicated).
- prefill: the prompt's FLOPs (2 N per token + attention, the output head once per sequence:
  workloads/llm/serve.py's prefill_flops) over peak x prefill MFU, at least one read of the weights.
  The peak is the one the card sustains under its power limit (analysis/rows/power.py: an A100 PCIe is
  not an A100 SXM4); the share of it measured on one card carries to another.
- tensor parallel over ``tp`` GPUs (Megatron's layout): two all-reduces per layer of
  tokens x hidden bf16 values, each a fixed latency plus the ring volume over the catalog's
  NVLink (or PCIe when the cards have no NVLink: interconnect.catalog_busbw).
- a request mix (prompt and output lengths) at a batch: TTFT = the batch's prefill; then
  output - 1 decode steps at the mean live context; sustained tokens/s = batch x output / the
  whole request (what llm-serve measures).

Shares are measured where the database has them (best llm-serve decode bandwidth over the
datasheet; best prefill MFU), else the sourced defaults below, and the origin is returned
with the figure.  A share is capped at 1: no engine reads faster than the memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuarena.analysis.physics import judged
from gpuarena.analysis.rows.power import sustained_peak
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads.llm import precisions as W
from gpuarena.workloads.llm.flops import (decode_bytes_per_step, flops_per_token, kv_cache_bytes, param_counts,
                                          prefill_flops)
from gpuarena.workloads.llm.shapes import resolve_shape
from gpuarena.store.result import Result

# gpt-fast (github.com/pytorch-labs/gpt-fast, README "Benchmarks"): Llama-2-7B in bf16 at batch 1
# on an A100-80GB decodes at 104.9 tokens/s, 1,397 GB/s of the card's 2,039 GB/s.
DEFAULT_DECODE_SHARE = (1397.31 / 2039, "default: gpt-fast's Llama-2-7B bf16 batch-1 decode on an A100-80GB, "
                        "1,397 GB/s of 2,039 (github.com/pytorch-labs/gpt-fast README)")
# The best share gpt-fast publishes (same README, Llama-2-70B bf16 at TP=2): 1,481.87 GB/s of 2,039.
DECODE_CEILING = (1481.87 / 2039, "gpt-fast's Llama-2-70B bf16 TP=2 batch-1 decode on A100-80GBs, 1,482 GB/s "
                  "of 2,039 (github.com/pytorch-labs/gpt-fast README)")
# Weight-only int8 and int4 (groups of 32) of the same README, one A100-80GB: Llama-2-7B decodes at 1,069.20
# and 862.69 GB/s (the default share); Llama-2-70B's 1,322.58 and 1,097.66 (8 GPUs) are the best it reaches.
_GPT_FAST = "(github.com/pytorch-labs/gpt-fast README)"
DEFAULT_SHARES = {
    "int8": (1069.20 / 2039, f"default: gpt-fast's Llama-2-7B int8 batch-1 decode on an A100-80GB, 1,069 GB/s of "
                             f"2,039 {_GPT_FAST}"),
    "int4": (862.69 / 2039, f"default: gpt-fast's Llama-2-7B int4 (groups of 32) batch-1 decode on an A100-80GB, "
                            f"863 GB/s of 2,039 {_GPT_FAST}")}
CEILINGS = {"int8": (1322.58 / 2039, f"gpt-fast's Llama-2-70B int8 batch-1 decode, 1,323 GB/s of 2,039 {_GPT_FAST}"),
            "int4": (1097.66 / 2039, f"gpt-fast's Llama-2-70B int4 batch-1 decode, 1,098 GB/s of 2,039 {_GPT_FAST}")}
# gpuarena's own eager prefill (BENCHMARKS.md, llm-serve on one H200, 2026-11-30): 492 TFLOP/s of 989.
DEFAULT_PREFILL_MFU = (0.497, "default: gpuarena's eager prefill, llama3-8b batch 64 on one H200, 492 TFLOP/s "
                       "(2026-11-30, run 20261130-210020-dd57ec; BENCHMARKS.md)")
# BENCHMARKS.md, two NVLinked H200s: an all-reduce of up to 512 KiB costs a fixed 30-60 us a call.
ALLREDUCE_LATENCY_S = 30e-6
BF16_MIN_CC = 8.0
PRECISIONS = W.SERVING_PRECISIONS      # the weights' precision: workloads/llm/precisions.py
MAX_TP = 8                     # one node's NVLink domain; beyond it TP is not modelled


@dataclass(frozen=True)
class Shares:
    decode: float
    decode_from: str
    prefill: float
    prefill_from: str
    origin_gpu: str | None = None      # where a measured decode share was measured

    def carried(self, gpu: catalog.GPU) -> str:
        """How the decode share applies to this GPU (said where it was measured elsewhere)."""
        if self.origin_gpu and self.origin_gpu != gpu.name:
            return (f"decode share measured on {catalog.match(self.origin_gpu).short}, carried here "
                    "(same engine assumed)")
        return ""


def capability(g: catalog.GPU) -> float:
    try:
        return float(g.raw.get("compute_capability") or 0)
    except ValueError:
        return 0.0


def refusal(g: catalog.GPU, precision: str, cfg=None, tp: int = 1) -> str | None:
    """Why this GPU cannot serve at this precision and TP degree, or None."""
    cc = capability(g)
    if precision not in PRECISIONS:
        return f"precision {precision!r}: llm-serve serves {', '.join(PRECISIONS)} weights"
    if precision == "fp8" and not g.fp8:
        return (f"FP8 weights need FP8 tensor cores (compute capability 8.9+: Ada, Hopper, Blackwell); "
                f"the {g.short} is {cc:g} ({g.architecture})")
    if precision in ("int8", "int4") and cc < BF16_MIN_CC:
        return (f"{precision} weight-only dequantises into bf16 (int4 on PyTorch's tinygemm kernel, sm_80+); the "
                f"{g.short} ({g.architecture}, compute capability {cc:g}) has no BF16")
    if precision == "bf16" and cc < BF16_MIN_CC:
        return f"the {g.short} ({g.architecture}, compute capability {cc:g}) has no BF16; serve it in fp16"
    if not g.peaks.get(W.COMPUTE[precision]):
        return f"no {W.COMPUTE[precision]} peak for the {g.short} in the catalog"
    if not g.memory_bandwidth_gbs:
        return "no memory bandwidth in the catalog"
    if tp > MAX_TP:
        return f"tensor parallel over {tp} GPUs spans nodes; the model covers one node (<= {MAX_TP})"
    if cfg is not None and cfg.n_heads % tp:
        return f"{tp} GPUs do not divide the model's {cfg.n_heads} attention heads"
    return None


def weights_bytes(cfg, precision: str = "bf16") -> float:
    """Bytes of the weights: every linear layer at the precision with its scales, the norms and the
    embedding table in bf16 (workloads/llm/precisions.py)."""
    total, dense = param_counts(cfg)
    return W.dense_bytes(cfg, precision) + (total - dense) * W.DTYPE_BYTES


def decode_bytes(cfg, precision: str, batch: int, context: int, tp: int = 1, kv_bytes: int = 2) -> float:
    """Bytes one decode step reads per GPU: the weights at the precision (tensor parallel splits
    them) and each sequence's KV cache at the context (split over at most n_kv_heads ranks)."""
    weights = decode_bytes_per_step(cfg, batch, context, W.bytes_per_weight(cfg, precision), 0)
    return weights / tp + kv_cache_bytes(cfg, batch, context, kv_bytes) / min(tp, cfg.n_kv_heads)


def memory_per_gpu(cfg, precision: str, tp: int, batch: int, context: int, kv_bytes: int = 2) -> float:
    kv = kv_cache_bytes(cfg, batch, context, kv_bytes) / min(tp, cfg.n_kv_heads)
    return weights_bytes(cfg, precision) / tp + kv


def max_batch(cfg, g: catalog.GPU, precision: str, tp: int, context: int, overhead: float,
              kv_bytes: int = 2) -> int:
    usable = g.memory_gb * 1e9 * (1 - overhead)
    per_seq = kv_cache_bytes(cfg, 1, context, kv_bytes) / min(tp, cfg.n_kv_heads)
    return max(0, int((usable - weights_bytes(cfg, precision) / tp) // per_seq))


def allreduce_s(cfg, g: catalog.GPU, tp: int, tokens: int, latency: float = ALLREDUCE_LATENCY_S) -> float:
    """Megatron's two all-reduces per layer of tokens x hidden bf16 values, on tp GPUs."""
    if tp <= 1:
        return 0.0
    from gpuarena.analysis.physics.interconnect import catalog_busbw, ring_allreduce_s

    bw, _ = catalog_busbw(g, tp)
    return 2 * cfg.n_layers * (latency + ring_allreduce_s(2.0 * tokens * cfg.dim, tp, bw))


def decode_step(cfg, g: catalog.GPU, precision: str, tp: int, batch: int, context: int,
                share: float, flops_eff: float = 1.0, latency: float | None = ALLREDUCE_LATENCY_S,
                kv_bytes: int = 2) -> dict:
    """One decode step; ``latency=None`` leaves communication out (latency and ring volume alike)."""
    moved = decode_bytes(cfg, precision, batch, context, tp, kv_bytes)
    t_mem = moved / (g.memory_bandwidth_gbs * 1e9 * min(share, 1.0))
    peak = sustained_peak(g, W.COMPUTE[precision])      # under the card's power limit (analysis/rows/power.py)
    t_flop = batch * flops_per_token(cfg, context, training=False) / tp / (peak * 1e12 * flops_eff)
    t_comm = 0.0 if latency is None else allreduce_s(cfg, g, tp, batch, latency)
    t = max(t_mem, t_flop) + t_comm
    return {"s": t, "bytes_per_gpu": moved, "comm_s": t_comm,
            "bound": "memory" if t_mem >= t_flop else "compute"}


def prefill_s(cfg, g: catalog.GPU, precision: str, tp: int, batch: int, prompt: int, mfu: float,
              share: float = 1.0, latency: float | None = ALLREDUCE_LATENCY_S) -> float:
    """The prefill of ``batch`` prompts (the batch's TTFT); ``latency=None``: no communication."""
    flops = batch * prefill_flops(cfg, prompt) / tp
    t_flop = flops / (sustained_peak(g, W.COMPUTE[precision]) * 1e12 * min(mfu, 1.0))
    t_mem = weights_bytes(cfg, precision) / tp / (g.memory_bandwidth_gbs * 1e9 * min(share, 1.0))
    return max(t_flop, t_mem) + (0.0 if latency is None else allreduce_s(cfg, g, tp, batch * prompt, latency))


def request(cfg, g: catalog.GPU, precision: str, tp: int, batch: int, prompt: int, output: int,
            decode_share: float, prefill_mfu: float, latency: float | None = ALLREDUCE_LATENCY_S,
            kv_bytes: int = 2) -> dict:
    """One request batch: TTFT, time per output token and sustained tokens/s side by side.
    ``latency=None`` leaves the all-reduces out entirely (the bounds: an engine may overlap them)."""
    ttft = prefill_s(cfg, g, precision, tp, batch, prompt, prefill_mfu, decode_share, latency)
    # a compute-bound decode step runs its matmuls no better than the prefill does
    step = decode_step(cfg, g, precision, tp, batch, prompt + output // 2, decode_share, prefill_mfu, latency,
                       kv_bytes)
    total = ttft + (output - 1) * step["s"]
    return {"ttft_s": ttft, "tpot_ms": step["s"] * 1e3, "tokens_per_s": batch * output / total,
            "decode_tokens_per_s": batch / step["s"], "bound": step["bound"], "comm_ms": step["comm_s"] * 1e3,
            "bytes_per_step_per_gpu": step["bytes_per_gpu"]}


def upper_bound(cfg, g: catalog.GPU, precision: str, tp: int, batch: int, prompt: int, output: int,
                kv_bytes: int = 2) -> dict:
    """The physical bound: datasheet bandwidth, dense peak, no communication at all (neither the
    all-reduces' latency nor their ring volume: an engine may overlap them with the matmuls)."""
    return request(cfg, g, precision, tp, batch, prompt, output, 1.0, 1.0, latency=None, kv_bytes=kv_bytes)


# --- shares: measured where stored, else the defaults -----------------------------------

def _ok(results: list[Result]) -> list[Result]:
    return [r for r in results if judged.judges("serving", r.workload) and r.status == "ok"
            and r.size != "tiny" and r.extra.tpot_ms_median]


def _kind(precision: str) -> str:
    """Precisions whose engines read weights alike: bf16 and fp16 (2 bytes, the same kernels)."""
    return "bf16" if precision in ("bf16", "fp16") else precision


def weight_precision(r: Result) -> str:
    """The weights' precision of a stored llm-serve result (int4-weights -> int4; else what it stored)."""
    return W.of_variant(r.variant, r.precision)


def decode_bandwidth_gbs(r: Result) -> float | None:
    """A result's decode tokens/s times the bytes this model counts for a step at the result's weight
    precision, batch and mean context: the bandwidth a projection at that share gives back exactly.
    The stored figure where the model's shape or precision cannot be read here."""
    e, p, prec = r.extra, r.params, weight_precision(r)
    try:
        cfg = resolve_shape(p.get("shape") or "", p.get("hf_config") or "")
    except UserError:       # an imported result's hf_config names a file of another machine
        cfg = None
    if cfg is None or prec not in PRECISIONS or not e.decode_tokens_per_s or not e.batch \
            or type(p.get("prompt_len")) is not int or type(p.get("new_tokens")) is not int:
        return e.decode_bandwidth_gbs
    context = round(p["prompt_len"] + p["new_tokens"] / 2)      # the mean live context (flops.decode_figures)
    return decode_bytes(cfg, prec, int(e.batch), context) * e.decode_tokens_per_s / int(e.batch) / 1e9


def prefill_mfu(r: Result) -> float | None:
    """Prefill model FLOP/s over the catalog's dense peak of the result's arithmetic (read time)."""
    g = catalog.find(r.device_name or "")
    got = r.extra.prefill_tflops
    try:
        peak = g.peak(W.COMPUTE.get(weight_precision(r), r.precision or "")) if g and got else None
    except UserError:          # a precision the catalog has no column for
        return None
    return got / peak if peak else None


def measured_bandwidth_share(results: list[Result], precision: str = "bf16") -> tuple[float, str, str] | None:
    """The best decode bandwidth over its GPU's datasheet bandwidth among full-size results with
    weights of this precision, capped at 1: (share, where it came from, the GPU's catalog name)."""
    best = None
    for r in _ok(results):
        g = catalog.find(r.device_name or "")
        if not g or not g.memory_bandwidth_gbs or _kind(weight_precision(r)) != _kind(precision):
            continue
        got = decode_bandwidth_gbs(r)
        share = min(1.0, got / g.memory_bandwidth_gbs) if got else None
        if share and (best is None or share > best[0]):
            best = (share, f"measured: {g.short}, llm-serve {r.variant}, batch {r.extra.batch}, "
                           f"result {r.id}", g.name)
    return best


def _best_prefill(results: list[Result], precision: str):
    mfus = [(min(1.0, m), r) for r in _ok(results) if (m := prefill_mfu(r))]
    mine = [x for x in mfus if _kind(weight_precision(x[1])) == _kind(precision)]
    return max(mine or mfus, key=lambda x: x[0]) if mfus else None


def shares(results: list[Result], precision: str = "bf16") -> Shares:
    """The decode share measured at this weight precision, else its published default (int8, int4) or
    the bf16 engine's (fp8: no published share of its own); the prefill MFU likewise, else any."""
    dec = measured_bandwidth_share(results, precision)
    if dec is None and precision not in DEFAULT_SHARES and _kind(precision) != "bf16":
        dec = measured_bandwidth_share(results, "bf16")
        dec = dec and (dec[0], f"{dec[1]} (bf16 weights, carried to {precision})", dec[2])
    default = DEFAULT_SHARES.get(precision, DEFAULT_DECODE_SHARE)
    pre = _best_prefill(results, precision)
    return Shares(decode=dec[0] if dec else default[0], decode_from=dec[1] if dec else default[1],
                  prefill=pre[0] if pre else DEFAULT_PREFILL_MFU[0],
                  prefill_from=(f"measured: {catalog.match(pre[1].device_name).short}, llm-serve "
                                f"{pre[1].variant}, result {pre[1].id}") if pre else DEFAULT_PREFILL_MFU[1],
                  origin_gpu=dec[2] if dec else None)
