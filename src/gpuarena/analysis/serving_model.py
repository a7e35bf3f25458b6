"""The serving model: what every verb (check, advise, the report) asks about LLM serving.

- decode, per step of ``batch`` sequences at ``context`` tokens, on ``tp`` GPUs:
  max(bytes read / (bandwidth x decode share), FLOPs / (peak x efficiency)) + the all-reduces.
  Bytes = every non-embedding weight at its precision once + each sequence's KV cache at the
  context (workloads/llm/flops.py's decode_bytes_per_step), split over the tensor-parallel ranks
  (KV over at most n_kv_heads of them: beyond that the heads are replicated).
- prefill: the prompt's FLOPs (2 N per token + attention, the output head once per sequence:
  workloads/llm/serve.py's prefill_flops) over peak x prefill MFU, at least one read of the weights.
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

from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry
from gpuarena.workloads.llm.flops import (decode_bytes_per_step, flops_per_token, kv_cache_bytes, param_counts,
                                          prefill_flops)
from gpuarena.workloads.precision import FP8_MIN_CAPABILITY
from gpuarena.store.result import Result

# gpt-fast (github.com/pytorch-labs/gpt-fast, README "Benchmarks"): Llama-2-7B in bf16 at batch 1
# on an A100-80GB decodes at 104.9 tokens/s, 1,397 GB/s of the card's 2,039 GB/s.
DEFAULT_DECODE_SHARE = (1397.31 / 2039, "default: gpt-fast's Llama-2-7B bf16 batch-1 decode on an A100-80GB, "
                        "1,397 GB/s of 2,039 (github.com/pytorch-labs/gpt-fast README)")
# The best share gpt-fast publishes (same README, Llama-2-70B bf16 at TP=2): 1,481.87 GB/s of 2,039.
DECODE_CEILING = (1481.87 / 2039, "gpt-fast's Llama-2-70B bf16 TP=2 batch-1 decode on A100-80GBs, 1,482 GB/s "
                  "of 2,039 (github.com/pytorch-labs/gpt-fast README)")
# gpuarena's own eager prefill (BENCHMARKS.md, llm-serve on one H200, session 5): 492 TFLOP/s of 989.
DEFAULT_PREFILL_MFU = (0.497, "default: gpuarena's eager prefill, llama3-8b batch 64 on one H200, 492 TFLOP/s "
                       "(BENCHMARKS.md, session 5)")
# BENCHMARKS.md, two NVLinked H200s: an all-reduce of up to 512 KiB costs a fixed 30-60 us a call.
ALLREDUCE_LATENCY_S = 30e-6
FP8_MIN_CC, BF16_MIN_CC = float("%d.%d" % FP8_MIN_CAPABILITY), 8.0
PRECISIONS = ("bf16", "fp16", "fp8")
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
            return f"decode share measured on {catalog.match(self.origin_gpu).short}, carried here (same engine assumed)"
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
        return f"precision {precision!r}: llm-serve serves bf16, fp16 or fp8 weights"
    if precision == "fp8" and cc < FP8_MIN_CC:
        return (f"FP8 weights need FP8 tensor cores (compute capability 8.9+: Ada, Hopper, Blackwell); "
                f"the {g.short} is {cc:g} ({g.architecture})")
    if precision == "bf16" and cc < BF16_MIN_CC:
        return f"the {g.short} ({g.architecture}, compute capability {cc:g}) has no BF16; serve it in fp16"
    if not g.peaks.get(precision):
        return f"no {precision} peak for the {g.short} in the catalog"
    if not g.memory_bandwidth_gbs:
        return "no memory bandwidth in the catalog"
    if tp > MAX_TP:
        return f"tensor parallel over {tp} GPUs spans nodes; the model covers one node (<= {MAX_TP})"
    if cfg is not None and cfg.n_heads % tp:
        return f"{tp} GPUs do not divide the model's {cfg.n_heads} attention heads"
    return None


def weight_bytes_per_param(precision: str) -> float:
    return 1.0 if precision == "fp8" else 2.0


def weights_bytes(cfg, precision: str = "bf16") -> float:
    """Bytes of the weights: every linear layer at the precision, the embedding table in bf16."""
    total, dense = param_counts(cfg)
    return dense * weight_bytes_per_param(precision) + (total - dense) * 2


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
    from gpuarena.analysis.interconnect import catalog_busbw, ring_allreduce_s

    bw, _ = catalog_busbw(g, tp)
    return 2 * cfg.n_layers * (latency + ring_allreduce_s(2.0 * tokens * cfg.dim, tp, bw))


def decode_step(cfg, g: catalog.GPU, precision: str, tp: int, batch: int, context: int,
                share: float, flops_eff: float = 1.0, latency: float = ALLREDUCE_LATENCY_S,
                kv_bytes: int = 2) -> dict:
    moved = decode_bytes_per_step(cfg, batch, context, weight_bytes_per_param(precision), 0) / tp \
        + kv_cache_bytes(cfg, batch, context, kv_bytes) / min(tp, cfg.n_kv_heads)
    t_mem = moved / (g.memory_bandwidth_gbs * 1e9 * min(share, 1.0))
    t_flop = batch * flops_per_token(cfg, context, training=False) / tp / (g.peaks[precision] * 1e12 * flops_eff)
    t_comm = allreduce_s(cfg, g, tp, batch, latency)
    t = max(t_mem, t_flop) + t_comm
    return {"s": t, "bytes_per_gpu": moved, "comm_s": t_comm,
            "bound": "memory" if t_mem >= t_flop else "compute"}


def prefill_s(cfg, g: catalog.GPU, precision: str, tp: int, batch: int, prompt: int, mfu: float,
              share: float = 1.0, latency: float = ALLREDUCE_LATENCY_S) -> float:
    flops = batch * prefill_flops(cfg, prompt) / tp
    t_flop = flops / (g.peaks[precision] * 1e12 * min(mfu, 1.0))
    t_mem = weights_bytes(cfg, precision) / tp / (g.memory_bandwidth_gbs * 1e9 * min(share, 1.0))
    return max(t_flop, t_mem) + allreduce_s(cfg, g, tp, batch * prompt, latency)


def request(cfg, g: catalog.GPU, precision: str, tp: int, batch: int, prompt: int, output: int,
            decode_share: float, prefill_mfu: float, latency: float = ALLREDUCE_LATENCY_S,
            kv_bytes: int = 2) -> dict:
    """One request batch: TTFT, time per output token and sustained tokens/s side by side."""
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
    """The physical bound: datasheet bandwidth, dense peak, communication free."""
    return request(cfg, g, precision, tp, batch, prompt, output, 1.0, 1.0, latency=0.0, kv_bytes=kv_bytes)


# --- shares: measured where stored, else the defaults -----------------------------------

def _ok(results: list[Result]) -> list[Result]:
    return [r for r in results if registry.has(r.workload, physics="serving") and r.status == "ok"
            and r.size != "tiny" and r.extra.tpot_ms_median]


def prefill_mfu(r: Result) -> float | None:
    """Prefill model FLOP/s over the catalog's dense peak of the result's precision (read time)."""
    g = catalog.find(r.device_name or "")
    got = r.extra.prefill_tflops
    try:
        peak = g.peak(r.precision or "") if g and got else None
    except UserError:          # a precision the catalog has no column for
        return None
    return got / peak if peak else None


def measured_bandwidth_share(results: list[Result]) -> tuple[float, str, str] | None:
    """The best decode bandwidth over its GPU's datasheet bandwidth among full-size results,
    capped at 1: (share, where it came from, the GPU's catalog name)."""
    best = None
    for r in _ok(results):
        g = catalog.find(r.device_name or "")
        got = r.extra.decode_bandwidth_gbs
        if not g or not g.memory_bandwidth_gbs or not got:
            continue
        share = min(1.0, got / g.memory_bandwidth_gbs)
        if best is None or share > best[0]:
            best = (share, f"measured: {g.short}, llm-serve {r.variant}, batch {r.extra.batch}, "
                           f"result {r.id}", g.name)
    return best


def shares(results: list[Result]) -> Shares:
    dec = measured_bandwidth_share(results)
    mfus = [(min(1.0, m), r) for r in _ok(results) if (m := prefill_mfu(r))]
    pre = max(mfus, key=lambda x: x[0]) if mfus else None
    return Shares(decode=dec[0] if dec else DEFAULT_DECODE_SHARE[0],
                  decode_from=dec[1] if dec else DEFAULT_DECODE_SHARE[1],
                  prefill=pre[0] if pre else DEFAULT_PREFILL_MFU[0],
                  prefill_from=(f"measured: {catalog.match(pre[1].device_name).short}, llm-serve "
                                f"{pre[1].variant}, result {pre[1].id}") if pre else DEFAULT_PREFILL_MFU[1],
                  origin_gpu=dec[2] if dec else None)


def ceiling(results: list[Result]) -> Shares:
    """The best shares credibly reached: the measured ones or the published ones, whichever is higher."""
    s = shares(results)
    return Shares(max(s.decode, DECODE_CEILING[0]),
                  s.decode_from if s.decode >= DECODE_CEILING[0] else DECODE_CEILING[1],
                  max(s.prefill, DEFAULT_PREFILL_MFU[0]),
                  s.prefill_from if s.prefill >= DEFAULT_PREFILL_MFU[0] else DEFAULT_PREFILL_MFU[1])
