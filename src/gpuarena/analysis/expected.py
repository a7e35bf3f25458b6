"""Is my number normal?  The expected figure beside each measured result.

Three references, each with where it comes from:

- **stored**: the same recipe (workload, variant, parameters) measured on the same GPU
  model in other runs: other hosts, other days, imported bundles (the median of them);
- **published**: the best like-for-like published figure (data/published_results.csv)
  for the same GPU and workload, at the same executed precision (BF16 and FP16 share
  the tensor peak), the same settings other than batch (sequence length, image
  size, steps), preferring the same engine class, then the nearest batch, then the
  newest; shown with its source and date;
- **model**: gpuarena's projection of this GPU from the same recipe's figures on
  other GPUs (stored results of the same workload, variant and parameters; else the
  published figures of the same precision), through ``model_expectation`` only.

The expected figure is the stored one where there is one, else the published one,
else the model's;
the band around it is the model's error band (how far the projection has been
wrong before).  A result whose 95% interval lies wholly below the band is
``below-expected``, with the likely causes read from its fingerprint and telemetry
(analysis/causes.py) -- but only against a like-for-like figure: a projection made
from other code's published figures (NVIDIA's fused BERT against HF's) is shown as
context and never flags.  Articles' own figures are never references (they are the
claims `check` judges).  Computed when results are read, never stored.
"""

from __future__ import annotations

import functools
import math
import re
import statistics

from gpuarena.store.flags import diverged
from gpuarena.analysis import causes as C
from gpuarena.analysis import precision as P
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.store.result import Result

FALLBACK_BAND = 0.30      # projection.DEFAULT_BAND: used when the model cannot say (no family, no references)
SETTINGS = ("image_size", "seq_len", "inference_steps")   # must match; batch may differ


def model_expectation(gpu: catalog.GPU, workload: str, request: str, refs: list[tuple[catalog.GPU, float]]) -> dict:
    """gpuarena's model of ``gpu`` on ``workload`` at ``request`` from figures on other GPUs.

    The one call into the projection model (analysis/projection.py): swap its body to change
    models.  Returns {"value": items/s or None, "band": fraction, "how": text}."""
    from gpuarena.analysis import projection as J

    band = J.band(workload, request) if J.family_prefix(workload) else J.DEFAULT_BAND
    refs = [(g, t) for g, t in refs if g.name != gpu.name and t > 0]
    if not refs:
        return {"value": None, "band": band, "how": "no figure of this recipe on another GPU"}
    try:
        abc, how = J.calibrate(refs, workload, request)
        value = J.predict(abc, gpu, workload, request)
    except (UserError, ZeroDivisionError, TypeError):
        return {"value": None, "band": band, "how": "the model has no peak for this GPU and precision"}
    try:    # never above what check accepts for this card (analysis/physics.py)
        from gpuarena.analysis import physics as X

        lim = X.limit(workload, gpu, request, X.workload_params(workload, {}))
        if value and value > lim.highest:
            value, how = lim.highest, f"{how}; capped at what physics and evidence allow the {gpu.short}"
    except (UserError, KeyError, ValueError):
        pass
    return {"value": value, "band": band, "how": how}


# --- like-for-like -------------------------------------------------------------------

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


def _engine(r: Result) -> str:
    if r.extra.engine:
        return r.extra.engine
    return "PyTorch compiled" if "compile" in r.variant else "PyTorch eager"


def _same_settings(mine: dict, theirs: dict) -> bool:
    """Every setting the result has (sequence length, image size, steps) is the published row's too."""
    return all(mine.get(k) is None or theirs.get(k) == mine.get(k) for k in SETTINGS)


def _like(r: Result, pub: Result, gpu: catalog.GPU) -> bool:
    """Like for like: same workload and settings, same executed precision, a PyTorch engine (TensorRT,
    MXNet ... run other kernels) of the same kind (compiled with compiled, eager with eager); never an
    article's figure (those are the claims gpuarena checks)."""
    return (pub.workload == r.workload and not str(pub.origin or "").startswith("article-")
            and _engine(pub).startswith("PyTorch")
            and ("compiled" in _engine(pub)) == ("compiled" in _engine(r))     # eager figures do not bound compiled runs
            and _same_settings(r.params, pub.params)
            and _cls(r.workload, published_request(pub), gpu) == _cls(r.workload, result_request(r), gpu)
            and _cls(r.workload, result_request(r), gpu) is not None)


def published_reference(r: Result, gpu: catalog.GPU, published: list[Result]) -> dict | None:
    """The best like-for-like published figure for r on gpu, or None."""
    batch = r.params.get("batch_size")

    def rank(p):
        pb = p.params.get("batch_size")
        dist = abs(math.log(pb / batch)) if pb and batch else 99.0
        return (_engine(p) != _engine(r), dist, [-int(x) for x in re.findall(r"\d+", p.extra.date or "")])

    same = [p for p in published if p.device_name == gpu.name and _like(r, p, gpu)]
    if not same:
        return None
    p = min(same, key=rank)
    return {"value": p.throughput_median, "source": p.origin, "date": p.extra.date or "undated",
            "engine": _engine(p), "batch_size": p.params.get("batch_size"),
            "precision": p.precision}


@functools.lru_cache(maxsize=512)
def _gpu(name: str) -> catalog.GPU | None:
    return catalog.find(name)


def _same_recipe(q: Result, r: Result) -> bool:
    """q is a usable figure of r's recipe: same workload (and version), variant and parameters, one GPU,
    full size, finite."""
    return (q.source != "published" and q.status == "ok" and bool(q.throughput_median)
            and q.workload == r.workload and q.variant == r.variant
            and q.params == r.params and q.workload_version == r.workload_version
            and q.size != "tiny" and q.gpus == 1
            and not diverged(q))


def _origin(q: Result):
    return q.extra.origin_run_id or q.run_id


def stored_reference(r: Result, gpu: catalog.GPU, pool: list[Result]) -> dict | None:
    """The same recipe on the same GPU model in other runs (other hosts, earlier days, imported bundles):
    the median of those figures, the most like-for-like reference there is."""
    mine = _origin(r)
    vals = [q.throughput_median for q in pool if _same_recipe(q, r) and _origin(q) != mine
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


# --- the verdict ---------------------------------------------------------------------

def eligible(r: Result) -> catalog.GPU | None:
    """The catalog GPU of a measured single-GPU full-size ok result, else None (nothing to expect)."""
    if (r.status != "ok" or r.source == "published" or r.size == "tiny"
            or r.gpus != 1 or not r.throughput_median
            or not str(r.device or "cuda").startswith("cuda")):
        return None
    return catalog.find(r.device_name or "")


def expect(r: Result, pool: list[Result], published: list[Result], fp: dict | None = None) -> dict | None:
    """The expected figure of one result, its ratio, band and below-expected verdict; None if none applies."""
    gpu = eligible(r)
    if gpu is None:
        return None
    pub = published_reference(r, gpu, published)
    ref = stored_reference(r, gpu, pool)
    request = result_request(r)
    refs, same_recipe = model_refs(r, gpu, pool, published)
    model = (model_expectation(gpu, r.workload, request, refs) if request
             else {"value": None, "band": FALLBACK_BAND, "how": "no precision to model"})
    model["same_recipe"] = same_recipe
    figure = (ref or pub or model)["value"]
    if not figure:
        return None
    measured = r.throughput_median
    hi = (r.throughput.ci95_high if r.throughput else None) or measured
    band = model["band"] or FALLBACK_BAND
    like_for_like = bool(ref or pub) or same_recipe
    basis = "stored" if ref else "published" if pub else "model"
    out = {"figure": figure, "basis": basis, "ratio": measured / figure, "stored": ref,
           "band": band, "low": figure * (1 - band), "like_for_like": like_for_like,
           "below": like_for_like and hi < figure * (1 - band), "published": pub,
           "model": {**model, "ratio": measured / model["value"]} if model["value"] else model}
    if pub:
        out["published"] = {**pub, "ratio": measured / pub["value"]}
    if ref:
        out["stored"] = {**ref, "ratio": measured / ref["value"]}
    if out["below"]:
        out["causes"] = C.causes(r, fp, gpu.tdp_w, gpu.pcie_gen)
    return out


def flag_text(e: dict, unit: str | None) -> str:
    """The `below-expected` flag as one line."""
    ref = e.get(e["basis"]) if e["basis"] in ("published", "stored") else None
    where = (ref["source"] + (f", {ref['date']}" if ref.get("date") != "stored" else "")) if ref else e["model"]["how"]
    why = "; likely: " + "; ".join(e["causes"]) if e.get("causes") else "; no cause recorded (NVML readings absent or normal)"
    return (f"below-expected: {e['ratio']:.2f}x the expected {e['figure']:,.0f} {unit or ''} ({where}), "
            f"under its band of -{e['band']:.0%}{why}")


def annotate(rows: list[Result], pool: list[Result], environment=lambda env_id: None) -> list[Result]:
    """rows with their derived ``expected`` (and a `below-expected` warning where it applies).
    ``environment(env_id)`` returns a stored fingerprint (Store.environment)."""
    from gpuarena.data.published import published_results

    published = published_results()
    recipes: dict[tuple, list[Result]] = {}      # the pool by (workload, variant): only those can be the same recipe
    for q in pool:
        recipes.setdefault((q.workload, q.variant), []).append(q)
    envs: dict = {}
    out = []
    for r in rows:
        if eligible(r) is None:
            out.append(r)
            continue
        eid = r.env_id
        if eid not in envs:
            envs[eid] = environment(eid) if eid is not None else None
        e = expect(r, recipes.get((r.workload, r.variant), []), published, envs[eid])
        if e is None:
            out.append(r)
            continue
        out.append(r.with_derived(expected=e, warnings=[flag_text(e, r.unit)] if e["below"] else []))
    return out
