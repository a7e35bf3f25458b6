"""Serving analysis (issue 17): what llm-serve results say, and what the memory and
bandwidth model says about GPUs that were not measured.  Returns data; the report
and the advise verb format it.

- ``curves`` (serving_curves.py): per engine recipe (device, variant, decode attention, prefill,
  model, prompt, new tokens), the throughput-latency curve across batches and the largest batch
  whose p99 time per output token meets the SLO; points timed by code unchanged since join today's.
- ``decode_share``: a result's decode bandwidth over the best ``membw`` result of
  the same device, computed when read (a later membw run counts).
- ``kv_concurrency``: the most sequences whose KV cache fits at a context length
  beside the weights and a stated overhead, for any memory size.
- ``advise``: the catalog ranked for serving a request mix (prompt and output lengths) on N
  GPUs: what fits, sustained tokens/s and TTFT from the serving model (serving_model.py).
"""

from __future__ import annotations

import math
from typing import Optional, Union

from pydantic import BaseModel

from gpuarena.analysis.physics import models
from gpuarena.analysis.physics import serving_model as M
from gpuarena.analysis.physics.serving_model import weights_bytes
from gpuarena.analysis.verbs.advise import Excluded
from gpuarena.data import catalog
from gpuarena.errors import UserError, brief
from gpuarena.workloads.llm.flops import flops_per_token, kv_cache_bytes
from gpuarena.workloads.llm.precisions import normalise
from gpuarena.workloads.llm.shapes import SHAPES, resolve_shape
from gpuarena.spec.suite import set_pairs
from gpuarena.store.result import Result

# Memory kept back from the KV cache: CUDA context, allocator slack, activations and the
# prefill's working set.  vLLM leaves the same 10% (gpu_memory_utilization defaults to 0.9).
OVERHEAD_FRACTION = 0.10
DEFAULT_CONTEXT = 8192
DEFAULT_OUTPUT = 128           # llm-serve's new_tokens default
ADVISE_KEYS = {"context": int, "prompt": int, "output": int, "shape": str, "hf_config": str, "precision": str,
               "batch": int, "overhead": float, "slo_ms": float}


def kv_concurrency(cfg, memory_bytes: float, context: int, precision: str = "bf16",
                   overhead_fraction: float = OVERHEAD_FRACTION, kv_bytes: int = 2) -> dict:
    """Largest number of sequences of ``context`` tokens whose KV cache fits in
    memory_bytes x (1 - overhead_fraction) after the weights (0 when the weights do not fit)."""
    usable = memory_bytes * (1 - overhead_fraction)
    w = weights_bytes(cfg, precision)
    per_seq = kv_cache_bytes(cfg, 1, context, kv_bytes)
    return {"max_batch": max(0, math.floor((usable - w) / per_seq)), "weights_bytes": w,
            "kv_bytes_per_sequence": per_seq, "usable_bytes": usable, "overhead_fraction": overhead_fraction}


def projected_decode(cfg, bandwidth_gbs: float, peak_tflops: float | None, batch: int, context: int,
                     precision: str = "bf16", bandwidth_share: float = 1.0) -> dict:
    """Roofline of one decode step at ``batch`` sequences of ``context`` tokens: the bytes it
    reads over the bandwidth reached (datasheet x share) against its FLOPs over the peak."""
    moved = M.decode_bytes(cfg, precision, batch, context)
    t_mem = moved / (bandwidth_gbs * 1e9 * bandwidth_share)
    t_flop = batch * flops_per_token(cfg, context, training=False) / (peak_tflops * 1e12) if peak_tflops else 0.0
    t = max(t_mem, t_flop)
    return {"tpot_ms": t * 1e3, "tokens_per_s": batch / t, "bytes_per_step": moved,
            "bound": "memory" if t_mem >= t_flop else "compute"}


# --- advise ---------------------------------------------------------------------------

Num = Union[int, float]          # a figure keeps its type in the JSON


class ServingRow(BaseModel):
    """One catalog GPU serving the request mix: what fits, the batch it runs, and the serving model's
    sustained tokens/s, TTFT and time per output token (at that batch and alone), priced by the cloud hour."""

    rank: int
    gpu: str
    gpus: int                                  # tensor parallel over this many
    memory_gb: Num
    bandwidth_gbs: Num
    max_batch: int                             # the most sequences whose KV cache fits
    batch: int                                 # the batch ranked (the SLO's, the asked, else max_batch)
    tokens_per_s: Num                          # at ``batch``, prefill included
    decode_tokens_per_s: Num
    tpot_ms: Num
    ttft_s: Num
    ttft_s_batch1: Num
    bound: str                                 # what limits a decode step: memory or compute
    comm_ms: Num
    tokens_per_s_batch1: Num
    tpot_ms_batch1: Num
    usd_per_hour: Optional[Num] = None         # cloud $/hour for all ``gpus``
    tokens_per_usd: Optional[Num] = None
    note: str = ""                             # where the decode share was carried from


class ServingAdvice(BaseModel):
    """`gpuarena advise -w llm-serve`: the catalog ranked for serving one request mix, most tokens/s first."""

    workload: str
    model: str                                 # the shape or the hf_config path
    context: int                               # prompt + output
    prompt: int
    output: int
    gpus: int
    precision: str                             # the weights'
    slo_ms: Optional[Num] = None               # the time per output token a batch keeps (None: no SLO)
    overhead_fraction: Num                     # memory kept back from the KV cache
    bandwidth_share: Num                       # decode's share of the datasheet bandwidth
    bandwidth_share_from: str
    prefill_mfu: Num
    prefill_mfu_from: str
    rows: list[ServingRow]
    excluded: list[Excluded]
    explanation: str


def parse_sets(items: list[str]) -> dict:
    """advise --set KEY=VALUE for llm-serve: context, prompt, output, shape, hf_config, precision,
    batch, overhead, slo_ms (the time per output token a batch must keep: the largest batch that
    keeps it, not the largest that fits).  context = prompt + output (output defaults to llm-serve's
    128 new tokens)."""
    out = {"context": None, "prompt": None, "output": DEFAULT_OUTPUT, "shape": "llama3-8b", "hf_config": "",
           "precision": "bf16", "batch": 0, "overhead": OVERHEAD_FRACTION, "slo_ms": 0.0}
    for k, v in set_pairs(items):
        if k not in ADVISE_KEYS:
            raise UserError(f"--set: llm-serve advice takes {', '.join(f'{x}=' for x in ADVISE_KEYS)}, not {brief(k)}")
        try:
            out[k] = ADVISE_KEYS[k](v.strip())
        except ValueError:
            raise UserError(f"--set {k}: expected {ADVISE_KEYS[k].__name__}, not {brief(v)}") from None
    if out["prompt"] is None:
        out["context"] = out["context"] or DEFAULT_CONTEXT
        out["prompt"] = out["context"] - out["output"]
    elif out["context"] is not None and out["context"] != out["prompt"] + out["output"]:
        raise UserError(f"--set context={out['context']} is not prompt + output = {out['prompt'] + out['output']}")
    out["context"] = out["prompt"] + out["output"]
    if out["prompt"] < 1 or out["output"] < 1 or out["batch"] < 0:
        raise UserError("--set prompt and output must be >= 1 (context > output) and batch >= 0")
    if not 0 <= out["overhead"] < 1:
        raise UserError("--set overhead is a fraction of memory in [0, 1)")
    if not (0 <= out["slo_ms"] < math.inf):
        raise UserError("--set slo_ms is a time per output token in ms (> 0; 0 = no SLO)")
    prec = normalise(out["precision"])
    if prec is None:
        raise UserError(f"--set precision={out['precision']!r}: the weights' precision is one of "
                        f"{', '.join(M.PRECISIONS)}")
    out["precision"] = prec
    return out


def sets_for(model: str, context: int, output: int | None = None) -> list[str]:
    """advise's --set items for a model named as llm-serve stores it (a shape or a config path)."""
    key = "shape" if model in SHAPES else "hf_config"
    return [f"context={context}", f"{key}={model}"] + ([f"output={output}"] if output else [])


def _row(cfg, g, s: dict, tp: int, sh: M.Shares, excluded: list[dict]) -> dict | None:
    why = M.refusal(g, s["precision"], cfg, tp)
    most = 0 if why else M.max_batch(cfg, g, s["precision"], tp, s["context"], s["overhead"])
    if not why and most < max(1, s["batch"]):
        need = M.memory_per_gpu(cfg, s["precision"], tp, max(1, s["batch"]), s["context"])
        why = (f"weights {M.weights_bytes(cfg, s['precision']) / 1e9:.1f} GB + {max(1, s['batch'])} sequence(s) of KV "
               f"at {s['context']:,} tokens need {need / 1e9:.1f} GB per GPU over {tp} GPU(s); "
               f"{1 - s['overhead']:.0%} of {g.memory_gb:g} GB is usable" + ("" if tp > 1 else "; try --gpus N"))
    if why:
        excluded.append({"gpu": g.name, "reason": why})
        return None
    args = (cfg, g, s["precision"], tp)
    batch = s["batch"] or (_slo_batch(args, s, sh, most) if s["slo_ms"] else most)
    if not batch:
        tpot = M.request(*args, 1, s["prompt"], s["output"], sh.decode, sh.prefill)["tpot_ms"]
        excluded.append({"gpu": g.name, "reason": f"{tpot:.1f} ms per output token at batch 1, over the "
                                                  f"{s['slo_ms']:g} ms SLO"})
        return None
    full = M.request(*args, batch, s["prompt"], s["output"], sh.decode, sh.prefill)
    one = M.request(*args, 1, s["prompt"], s["output"], sh.decode, sh.prefill)
    usd = g.cloud.usd * tp if g.cloud.usd else None
    return {"gpu": g.name, "gpus": tp, "memory_gb": g.memory_gb, "bandwidth_gbs": g.memory_bandwidth_gbs,
            "max_batch": most, "batch": batch, "tokens_per_s": full["tokens_per_s"],
            "decode_tokens_per_s": full["decode_tokens_per_s"], "tpot_ms": full["tpot_ms"],
            "ttft_s": full["ttft_s"], "ttft_s_batch1": one["ttft_s"], "bound": full["bound"],
            "comm_ms": full["comm_ms"], "tokens_per_s_batch1": one["decode_tokens_per_s"],
            "tpot_ms_batch1": one["tpot_ms"], "usd_per_hour": usd,
            "tokens_per_usd": full["tokens_per_s"] * 3600 / usd if usd else None, "note": sh.carried(g)}


def _slo_batch(args: tuple, s: dict, sh: M.Shares, most: int) -> int:
    """The largest batch up to ``most`` whose time per output token keeps ``slo_ms`` (0 if none):
    a step's time grows with the batch, so a bisection finds it."""
    def keeps(b: int) -> bool:
        return M.request(*args, b, s["prompt"], s["output"], sh.decode, sh.prefill)["tpot_ms"] <= s["slo_ms"]
    lo, hi = 0, most
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if keeps(mid) else (lo, mid - 1)
    return lo


def advise(results: list[Result], sets: list[str], min_memory: float | None = None, gpus: int = 1,
           include_consumer: bool = False, overrides: dict | None = None) -> ServingAdvice:
    """The catalog ranked for serving a request mix on ``gpus`` GPUs (tensor parallel): GPUs that
    hold the weights and at least one sequence, most sustained tokens/s (prefill included) first.
    Priced by cloud $/GPU-hour (``overrides``: load_prices); GeForce cards only when asked."""
    s = parse_sets(sets)
    if not 1 <= gpus <= M.MAX_TP:
        raise UserError(f"--gpus {gpus}: llm-serve is modelled as tensor parallel within one node (1-{M.MAX_TP})")
    cfg = resolve_shape(s["shape"], s["hf_config"])
    sh = M.shares(results, s["precision"])
    rows, excluded = [], ([] if include_consumer else catalog.consumer_excluded())
    for g in catalog.priced(overrides, "cloud", include_consumer):
        if min_memory and g.memory_gb < min_memory:
            excluded.append({"gpu": g.name, "reason": f"{g.memory_gb:g} GB < {min_memory:g} GB"})
            continue
        row = _row(cfg, g, s, gpus, sh, excluded)
        if row:
            rows.append(row)
    if not rows:
        raise UserError(f"no catalog GPU serves this model at this context on {gpus} GPU(s): "
                        + "; ".join(f"{catalog.match(e['gpu']).short}: {e['reason']}" for e in excluded[:3]))
    rows.sort(key=lambda x: -x["tokens_per_s"])
    ranked = [ServingRow(rank=i, **x) for i, x in enumerate(rows, 1)]
    return ServingAdvice(workload=models.SERVING.workloads()[0], model=s["hf_config"] or s["shape"],
                         context=s["context"], prompt=s["prompt"], output=s["output"], gpus=gpus,
                         precision=s["precision"], slo_ms=s["slo_ms"] or None, overhead_fraction=s["overhead"],
                         bandwidth_share=sh.decode, bandwidth_share_from=sh.decode_from, prefill_mfu=sh.prefill,
                         prefill_mfu_from=sh.prefill_from, rows=ranked, excluded=[Excluded(**e) for e in excluded],
                         explanation=explain(ranked, s, sh, cfg, gpus))


def explain(rows: list[ServingRow], s: dict, sh: M.Shares, cfg, gpus: int) -> str:
    top, fast1 = rows[0], max(rows, key=lambda x: x.tokens_per_s_batch1)
    most = max(rows, key=lambda x: x.max_batch)
    per_seq = kv_cache_bytes(cfg, 1, s["context"]) / 1e9
    on = f" on {gpus} GPUs (tensor parallel)" if gpus > 1 else ""
    text = (f"Serving {s['hf_config'] or s['shape']} ({s['precision']} weights, "
            f"{M.weights_bytes(cfg, s['precision']) / 1e9:.1f} GB){on}, requests of {s['prompt']:,} prompt + "
            f"{s['output']:,} output tokens, needs {per_seq:.2f} GB of KV cache per sequence. The {top.gpu} "
            f"sustains the most tokens/s ({top.tokens_per_s:,.0f} at batch {top.batch}, prefill included; "
            f"TTFT {top.ttft_s:.2f} s for the batch, {top.ttft_s_batch1 * 1e3:,.0f} ms alone).")
    if s["slo_ms"] and not s["batch"]:
        text += (f" Each GPU's batch is the largest whose time per output token keeps the {s['slo_ms']:g} ms "
                 "SLO (at most what fits).")
    if most is not top:
        text += f" The {most.gpu} holds the most sequences ({most.max_batch})."
    if fast1 is not top:
        text += f" At batch 1 the {fast1.gpu} decodes fastest ({fast1.tpot_ms_batch1:.1f} ms per token)."
    text += (" Decode reads every weight and the live KV cache each step (tokens/s ~ batch x bandwidth / bytes "
             f"per step until the FLOPs bound); bandwidth is the datasheet's x {sh.decode:.0%} ({sh.decode_from}); "
             f"prefill runs at {sh.prefill:.0%} of the dense peak ({sh.prefill_from})"
             + ("; tensor parallel adds two all-reduces per layer (30 us each plus the ring volume over NVLink "
                "or PCIe)" if gpus > 1 else "")
             + f"; {s['overhead']:.0%} of memory is kept back. A projection: measure before buying.")
    return text
