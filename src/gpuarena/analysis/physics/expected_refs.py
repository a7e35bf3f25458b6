"""The references a result's expected figure is taken from (analysis/verbs/expected.py): the same recipe
stored on the same GPU, the best like-for-like published figure, and the figures the model is
calibrated on.  Like for like: the same workload and settings, the same executed precision, the same
engine class (rows/engine.py engine_of, the one rule: compiled with compiled, eager with eager, never TensorRT for
PyTorch)."""

from __future__ import annotations

import functools
import math
import re
import statistics

from gpuarena.analysis.rows import precision as P
from gpuarena.analysis.rows.engine import engine_of
from gpuarena.analysis.rows.published import COMPILED, EAGER
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.store.flags import diverged
from gpuarena.store.result import Result

SETTINGS = ("image_size", "seq_len", "inference_steps")   # must match; batch may differ


def _cls(workload: str, request: str | None, gpu: catalog.GPU) -> str | None:
    """The precision the workload's dominant ops executed at on this GPU (bf16 and fp16 as one)."""
    if request is None:
        return None
    try:
        p = P.peak_precision(workload, request, P.arch_of(gpu))
    except (UserError, KeyError, AttributeError):
        return None
    return "fp16" if p in ("bf16", "fp16") else p


def result_request(r: Result) -> str | None:
    try:
        return P.request_of_variants(frozenset(r.variant.split("+")), r.precision)
    except UserError:
        return None


def published_request(r: Result) -> str | None:
    """The request a published row made, from its precision text."""
    p = str(r.precision or "").lower()
    if "tf32 off" in p or "ieee" in p:
        return "fp32-ieee"
    if "bf16" in p:
        return "bf16"
    if re.search(r"\bamp\b|mixed|fp16", p):
        return "fp16"
    if "tf32" in p:
        return "tf32"
    if p.startswith("fp32") or r.variant == "seed":
        return "default"
    return None


def request_of(r: Result) -> str | None:
    """The precision request of a result, measured or published."""
    return published_request(r) if r.source == "published" else result_request(r)


def _same_row(p: Result, r: Result) -> bool:
    """p is r itself (a published row read from the catalog and from the database)."""
    return (r.source == "published" and p.origin == r.origin and p.device_name == r.device_name
            and p.throughput_median == r.throughput_median and p.params == r.params)


def _same_settings(mine: dict, theirs: dict) -> bool:
    """Every setting the result has (sequence length, image size, steps) is the published row's too."""
    return all(mine.get(k) is None or theirs.get(k) == mine.get(k) for k in SETTINGS)


def _like(r: Result, pub: Result, gpu: catalog.GPU) -> bool:
    """Like for like: same workload and settings, same executed precision, a PyTorch engine (TensorRT,
    MXNet ... run other kernels) of the same kind (compiled with compiled, eager with eager); never an
    article's figure (those are the claims gpuarena checks)."""
    return (pub.workload == r.workload and not str(pub.origin or "").startswith("article-")
            and engine_of(pub) in (EAGER, COMPILED)
            and (engine_of(pub) == COMPILED) == (engine_of(r) == COMPILED)   # eager does not bound compiled
            and _same_settings(r.params, pub.params)
            and _cls(r.workload, published_request(pub), gpu) == _cls(r.workload, request_of(r), gpu)
            and _cls(r.workload, request_of(r), gpu) is not None and not _same_row(pub, r))


def published_reference(r: Result, gpu: catalog.GPU, published: list[Result]) -> dict | None:
    """The best like-for-like published figure for r on gpu, or None."""
    batch = r.params.get("batch_size")

    def rank(p):
        pb = p.params.get("batch_size")
        dist = abs(math.log(pb / batch)) if pb and batch else 99.0
        return (engine_of(p) != engine_of(r), dist, [-int(x) for x in re.findall(r"\d+", p.extra.date or "")])

    same = [p for p in published if p.device_name == gpu.name and _like(r, p, gpu)]
    if not same:
        return None
    p = min(same, key=rank)
    return {"value": p.throughput_median, "source": p.origin, "date": p.extra.date or "undated",
            "engine": engine_of(p), "batch_size": p.params.get("batch_size"),
            "precision": p.precision}


@functools.lru_cache(maxsize=512)
def _gpu(name: str) -> catalog.GPU | None:
    return catalog.find(name)


def _same_recipe(q: Result, r: Result) -> bool:
    """q is a usable figure of r's recipe: same workload (and version), variant, parameters and GPU count,
    full size, finite."""
    return (q.source != "published" and q.status == "ok" and bool(q.throughput_median)
            and q.workload == r.workload and q.variant == r.variant
            and q.params == r.params and q.workload_version == r.workload_version
            and q.size != "tiny" and q.gpus == r.gpus
            and not diverged(q))


def _origin(q: Result):
    return q.extra.origin_run_id or q.run_id


def stored_reference(r: Result, gpu: catalog.GPU, pool: list[Result],
                     value=lambda q: q.throughput_median) -> dict | None:
    """The same recipe on the same GPU model in other runs (other hosts, earlier days, imported bundles):
    the median of those figures (``value`` of each), the most like-for-like reference there is."""
    mine = _origin(r)
    vals = [value(q) for q in pool if _same_recipe(q, r) and _origin(q) != mine and value(q)
            and getattr(_gpu(q.device_name or ""), "name", None) == gpu.name]
    if not vals:
        return None
    runs = sorted({str(_origin(q)) for q in pool if _same_recipe(q, r) and _origin(q) != mine})
    return {"value": statistics.median(vals), "n": len(vals),
            "source": f"gpuarena: median of {len(vals)} result(s) of this recipe on {gpu.short} in run(s) "
                      + ", ".join(runs[:3]) + (" ..." if len(runs) > 3 else ""), "date": "stored"}


def model_refs(r: Result, gpu: catalog.GPU, pool: list[Result], published: list[Result]) -> tuple[list, bool]:
    """(references, same recipe?): the same recipe on other GPUs from stored results (same workload,
    variant, parameters), else the published figures of the same executed precision (best per GPU),
    which are other code: context, never grounds for a flag."""
    best: dict[str, tuple[catalog.GPU, float]] = {}
    for q in pool:
        g = _gpu(q.device_name or "")
        if g is None or g.name == gpu.name or not _same_recipe(q, r):
            continue
        if g.name not in best or q.throughput_median > best[g.name][1]:
            best[g.name] = (g, q.throughput_median)
    if best:
        return list(best.values()), True
    for p in published:
        g = _gpu(p.device_name or "")
        if g is None or g.name == gpu.name or not _like(r, p, g):
            continue
        if g.name not in best or p.throughput_median > best[g.name][1]:
            best[g.name] = (g, p.throughput_median)
    return list(best.values()), False
