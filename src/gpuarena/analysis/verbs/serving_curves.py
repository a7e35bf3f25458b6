"""What measured llm-serve results say (issue 17): per engine recipe, the throughput-latency curve
across batches and the largest batch whose p99 time per output token meets the SLO.

A curve joins the points timed by today's code for its recipe (issue 23): a result of an older
version that no later version changed (the workload's ``version_changes``, llm/versions.py) sits on
the current curve beside today's; a result a later version changed keeps a curve of its own version,
labelled with the versions that changed it, and is never mixed into the current one.
"""

from __future__ import annotations

import math
from typing import Optional, Union

from pydantic import BaseModel

from gpuarena.analysis.physics import models
from gpuarena.analysis.rows import common as R
from gpuarena.analysis.physics import serving_model as M
from gpuarena.analysis.physics.serving_model import prefill_mfu
from gpuarena.store.result import Result
from gpuarena.workloads import registry

CURRENT = "current"      # the last element of a current curve's key; a superseded curve's is its version
Num = Union[int, float]


class ServingPoint(BaseModel):
    """One batch of a curve: the latest result timed at it, its prefill and decode figures."""

    batch: int
    result_id: int
    version: Optional[int] = None              # the llm-serve version that timed it
    ttft_ms: Num
    prefill_tokens_per_s: Optional[Num] = None
    prefill_mfu: Optional[Num] = None          # over the catalog's dense peak
    tpot_ms_median: Num
    tpot_ms_p99: Optional[Num] = None
    decode_tokens_per_s: Optional[Num] = None
    tokens_per_s: Optional[Num] = None         # generated tokens over the whole request
    decode_bandwidth_gbs: Optional[Num] = None
    decode_share_of_membw: Optional[Num] = None
    peak_memory_bytes: Optional[int] = None
    kv_cache_bytes: Optional[Num] = None


class ServingCurve(BaseModel):
    """One engine recipe's throughput-latency curve and its SLO capacity."""

    gpu: str
    variant: str
    precision: str                             # the weights'
    attention: str                             # decode attention
    prefill: str                               # eager, compiled, compiled (CUDA graphs)
    model: Optional[str] = None                # the shape or hf_config
    version: Optional[int] = None              # the version it stands for (today's for a current curve)
    current: bool
    timed_by: list[int]                        # the versions that timed its points
    changed_by: Optional[list[int]] = None     # later versions that changed it (None: cannot tell)
    prompt_len: int
    new_tokens: int
    points: list[ServingPoint]
    slo_ms: float
    slo_batch: Optional[int] = None            # the largest batch whose p99 TPOT meets slo_ms
    largest_fit: int
    oom_batch: Optional[int] = None            # the smallest batch that ran out of memory
    size: str


def _ok(results: list[Result]) -> list[Result]:
    """Measured serving results with decode figures (typed in store/extra.py, which keeps them
    together with ttft_s and batch) and the prompt and output lengths they were timed at."""
    return [r for r in results if models.SERVING.judges(r.workload) and r.status == "ok"
            and r.extra.tpot_ms_median
            and all(type(r.params.get(k)) is int for k in ("prompt_len", "new_tokens"))]


def membw_gbs(results: list[Result], device_name: str, tiny: bool) -> float | None:
    """The best measured membw (copy, read + write) on that device, same size class."""
    xs = [r.throughput_median for r in results if r.status == "ok"
          and registry.has(r.workload, device_figure="memory-bandwidth")
          and r.device_name == device_name and (r.size == "tiny") == tiny
          and r.source != "published" and r.throughput_median]
    return max(xs) if xs else None


def decode_share(r: Result, results: list[Result]) -> float | None:
    bw = membw_gbs(results, r.device_name, r.size == "tiny")
    got = r.extra.decode_bandwidth_gbs
    return got / bw if bw and got else None


def _batch(r: Result) -> int:
    return int(r.extra.batch or r.params["batch_size"])


def changed_since(r: Result) -> list[int] | None:
    """The later versions of its workload that changed what ``r`` timed ([]: today's code times it
    alike); None when its class cannot tell (no table, or a version this installation lacks)."""
    ask = registry.fact(r.workload, "changed_since")
    return ask(r.workload_version, r.variant.split("+"), {**r.params, "batch_size": _batch(r)}) if ask else None


def _prefill(r: Result) -> str:
    """The prefill kind a result ran (a result that ran out of memory in setup stored none: eager)."""
    text = str(r.extra.prefill or "")
    return ("eager" if not text.startswith("torch.compile") else
            "compiled (CUDA graphs)" if "CUDA graphs" in text else "compiled")


def _setting(r: Result) -> tuple:
    """The engine recipe a curve is of: the variant, the decode attention it ran (a result from
    before llm-serve stored it ran SDPA's), its prefill kind, on one GPU, model and request shape;
    last, CURRENT where no later version changed what it timed, else its own version (one recipe
    runs faster from one version to the next: llm-serve 8's bf16 batch-1 decode)."""
    p = r.params
    model = p.get("hf_config") or p.get("shape")
    attention = r.extra.decode_attention or "sdpa"
    return (R.gpu_of(r), r.variant, attention, _prefill(r), model, p.get("prompt_len"), p.get("new_tokens"),
            CURRENT if changed_since(r) == [] else r.workload_version)


def _but_prefill(setting: tuple) -> tuple:
    """A setting without its prefill kind: a result that ran out of memory in setup stored none."""
    return setting[:3] + setting[4:]


def _point(r: Result, ceilings: list[Result]) -> ServingPoint:
    e = r.extra
    return ServingPoint(batch=_batch(r), result_id=r.id, version=r.workload_version, ttft_ms=e.ttft_s * 1e3,
                        prefill_tokens_per_s=e.prefill_tokens_per_s, prefill_mfu=prefill_mfu(r),
                        tpot_ms_median=e.tpot_ms_median, tpot_ms_p99=e.tpot_ms_p99,
                        decode_tokens_per_s=e.decode_tokens_per_s, tokens_per_s=r.throughput_median,
                        decode_bandwidth_gbs=e.decode_bandwidth_gbs,
                        decode_share_of_membw=decode_share(r, ceilings),
                        peak_memory_bytes=r.peak_memory_bytes, kv_cache_bytes=e.kv_cache_bytes)


def _versions(key: tuple, by_batch: dict[int, Result]) -> dict:
    """What the curve's label says of its versions: the version it stands for (today's for a current
    curve), the versions that timed its points, and for another the later versions that changed it
    (None: its workload cannot tell)."""
    first = next(iter(by_batch.values()))
    timed = sorted({r.workload_version for r in by_batch.values() if r.workload_version is not None})
    if key[-1] == CURRENT:
        return {"version": registry.fact(first.workload, "version"), "current": True, "timed_by": timed,
                "changed_by": []}
    return {"version": key[-1], "current": False, "timed_by": timed, "changed_by": changed_since(first)}


def curves(results: list[Result], ceilings: list[Result] | None = None) -> list[ServingCurve]:
    """Per setting: points by batch (the latest result of each batch) and the SLO capacity; current
    curves first (per GPU and model, the fastest recipe first), then the superseded ones.  ``ceilings``:
    where to look for membw results (default: ``results``)."""
    ceilings = results if ceilings is None else ceilings
    groups: dict[tuple, dict[int, Result]] = {}
    for r in _ok(results):
        groups.setdefault(_setting(r), {})[_batch(r)] = r
    ooms = [r for r in results if r.status == "oom" and models.SERVING.judges(r.workload)]
    out = []
    for key, by_batch in groups.items():
        gpu, variant, attention, prefill, model, prompt, new, _ = key
        first = next(iter(by_batch.values()))
        points = [_point(by_batch[b], ceilings) for b in sorted(by_batch)]
        oom = [int(r.params["batch_size"]) for r in ooms if _but_prefill(_setting(r)) == _but_prefill(key)]
        slo = float(first.params.get("slo_ms") or 50.0)
        meeting = [p.batch for p in points if (p.tpot_ms_p99 or math.inf) <= slo]
        out.append(ServingCurve(gpu=gpu, variant=variant, precision=M.weight_precision(first),
                                attention=attention, prefill=prefill, model=model, **_versions(key, by_batch),
                                prompt_len=prompt, new_tokens=new,
                                points=points, slo_ms=slo, slo_batch=max(meeting) if meeting else None,
                                largest_fit=max(by_batch), oom_batch=min(oom) if oom else None, size=first.size))
    # current curves first; per GPU and model, the fastest engine recipe (its best decode tokens/s) first
    return sorted(out, key=lambda c: (not c.current, c.gpu, c.model,
                                      -max((p.decode_tokens_per_s or 0.0) for p in c.points)))
