"""Is my number normal?  The expected figure beside every finite result (measured or published, on
one GPU or several), from one model, the first of:

- **stored**: the same recipe (workload, variant, parameters, GPU count) measured on the
  same GPU model in other runs: other hosts, other days, imported bundles (the median);
- **published**: the best like-for-like published figure (data/published_results.csv;
  analysis/physics/expected_refs.py) for the same GPU and workload, at the same executed precision,
  the same settings other than batch, the same engine class (rows/engine.py), then the
  nearest batch, then the newest; shown with its source and date;
- **catalog** (device checks: matmul, copy, host links, collectives): the card's physical
  bound x the share healthy cards reach (analysis/verbs/expected_device.py); a device check is
  always also held to it, since a stored figure may come from the same slow card;
- **model**: gpuarena's projection of this GPU from the same recipe's figures on other
  GPUs (``model_expectation``), else the workload's own physics (analysis/physics/expected_physics.py:
  roofline, serving, decoder training, data parallel, endpoint).

The band is the model's error band (how far the projection has been wrong before), or the
catalog's (published and card-to-card spread); ``low``-``high`` is the range a healthy
result falls in.  A measured result whose 95% interval lies wholly below ``low`` is
``below-expected``, with the likely causes read from its fingerprint and telemetry
(analysis/rows/causes.py) -- but only against a like-for-like figure: a model's figure, another
generation's device figure, or a figure set beside a published row is context and never
flags.  Articles' own figures are never references (they are the claims `check` judges).
Computed when results are read, never stored.
"""

from __future__ import annotations

from gpuarena.analysis.rows import causes as C
from gpuarena.analysis.verbs import expected_device as D
from gpuarena.analysis.physics import models
from gpuarena.analysis.physics.expected_refs import model_refs, published_reference, request_of, stored_reference
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.store.result import Result
from gpuarena.workloads import registry

FALLBACK_BAND = 0.30      # projection.DEFAULT_BAND: used when the model cannot say (no family, no references)


def model_expectation(gpu: catalog.GPU, workload: str, request: str, refs: list[tuple[catalog.GPU, float]]) -> dict:
    """gpuarena's model of ``gpu`` on ``workload`` at ``request`` from figures on other GPUs.

    The one call into the projection model (analysis/physics/projection.py): swap its body to change
    models.  Returns {"value": items/s or None, "band": fraction, "how": text}."""
    from gpuarena.analysis.physics import projection as J

    band = J.band(workload, request) if J.family_prefix(workload) else J.DEFAULT_BAND
    refs = [(g, t) for g, t in refs if g.name != gpu.name and t > 0]
    if not refs:
        return {"value": None, "band": band, "how": "no figure of this recipe on another GPU"}
    try:
        abc, how = J.calibrate(refs, workload, request)
        value = J.predict(abc, gpu, workload, request)
    except (UserError, ZeroDivisionError, TypeError):
        return {"value": None, "band": band, "how": "the model has no peak for this GPU and precision"}
    try:    # never above what check accepts for this card (analysis/physics/limits.py)
        from gpuarena.analysis.physics import limits as X
        from gpuarena.analysis.physics.roofline import workload_params

        lim = X.limit(workload, gpu, request, workload_params(workload, {}))
        if value and value > lim.highest:
            value, how = lim.highest, f"{how}; capped at what physics and evidence allow the {gpu.short}"
    except (UserError, KeyError, ValueError):
        pass
    return {"value": value, "band": band, "how": how}


# --- the verdict ---------------------------------------------------------------------

def eligible(r: Result) -> catalog.GPU | None:
    """The catalog GPU of a finite full-size result (measured or published, on any GPU count), else None
    (nothing to expect)."""
    if (r.status != "ok" or r.size == "tiny" or not r.throughput_median
            or not str(r.device or "cuda").startswith("cuda")):
        return None
    return catalog.find(r.device_name or "")


def expect_device(r: Result, gpu: catalog.GPU, pool: list[Result], fp: dict | None = None,
                  recipe: list[Result] | None = None) -> dict | None:
    """A device check (matmul, copy, host link, collective) in its figure's unit (TFLOP/s, GB/s, bus GB/s):
    the same recipe stored on the same GPU where there is one, else the catalog's figure
    (analysis/verbs/expected_device.py).  Below expected when under either band: a stored figure may come from
    the same slow card, the catalog's may not."""
    cat = D.device_result(r, pool)
    if cat is None:
        return None
    measured = cat.ratio * cat.figure
    hi = (r.throughput.ci95_high if r.throughput and r.throughput.ci95_high else r.throughput_median)
    hi *= measured / r.throughput_median
    ref = stored_reference(r, gpu, pool if recipe is None else recipe, D.value_of)
    out = cat.model_dump(exclude_unset=True)
    if ref:
        band = max(cat.band - D.M.MICRO_SPREAD, D.M.MICRO_SPREAD)     # the same card model: no card-to-card term
        out |= {"figure": ref["value"], "basis": "stored", "ratio": measured / ref["value"],
                "stored": {**ref, "ratio": measured / ref["value"]}, "band": band,
                "low": ref["value"] * (1 - band), "high": ref["value"] * (1 + band),
                "source": ref["source"] + f"; band {band:.0%}; catalog: {cat.figure:,.1f} {cat.unit}"}
        out["below"] = bool(cat.below or (cat.like_for_like and hi < out["low"]))
    if out["below"]:
        out["causes"] = list(cat.causes or []) + C.causes(r, fp, gpu.tdp_w, gpu.pcie_gen)
    return out


def model_figure(r: Result, gpu: catalog.GPU, pool: list[Result], published: list[Result],
                 everything: list[Result]) -> dict:
    """The model's figure: the projection from the same recipe (else like published figures) on other
    GPUs where the workload has a published family, else the workload's physics (expected_physics.py)."""
    request = request_of(r)
    refs, same_recipe = model_refs(r, gpu, pool, published)
    model = (model_expectation(gpu, r.workload, request, refs) if request
             else {"value": None, "band": FALLBACK_BAND, "how": "no precision to model"})
    physics = None if model["value"] else physics_expectation(r, gpu, everything)
    if physics:     # the projection's band still measures a stored or published reference
        return {**physics, "same_recipe": False, "reference_band": model["band"]}
    return {**model, "same_recipe": same_recipe}


def expect(r: Result, pool: list[Result], published: list[Result], fp: dict | None = None,
           everything: list[Result] | None = None) -> dict | None:
    """The expected figure of one result, its ratio, band and below-expected verdict; None if none applies.
    ``pool``: the stored results of r's recipe (or more); ``everything``: all ok results (the physics
    models' calibration: other results' shares, the 1-GPU step of a data-parallel run), pool if None."""
    gpu = eligible(r)
    if gpu is None:
        return None
    everything = pool if everything is None else everything
    if D.figure_of(r.workload):
        return expect_device(r, gpu, everything, fp, pool)
    pub = published_reference(r, gpu, published)
    ref = stored_reference(r, gpu, pool)
    model = model_figure(r, gpu, pool, published, everything)
    figure = (ref or pub or model)["value"]
    if not figure:
        return None
    measured = r.throughput_median
    hi = (r.throughput.ci95_high if r.throughput else None) or measured
    band = (model.pop("reference_band", None) if ref or pub else None) or model["band"] or FALLBACK_BAND
    model.pop("reference_band", None)
    like_for_like = bool(ref or pub) or model["same_recipe"]
    basis = "stored" if ref else "published" if pub else "model"
    src = ref["source"] if ref else f"{pub['source']}, {pub['date']}" if pub else "model: " + model["how"]
    out = {"figure": figure, "basis": basis, "ratio": measured / figure, "stored": ref,
           "band": band, "low": figure * (1 - band), "high": figure * (1 + band), "like_for_like": like_for_like,
           "source": src + ("" if like_for_like else " (not like for like: context, never a flag)")
           + (" (a published figure: context, never a flag)" if r.source == "published" else ""),
           "below": like_for_like and r.source != "published" and hi < figure * (1 - band), "published": pub,
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
    why = ("; likely: " + "; ".join(e["causes"]) if e.get("causes")
           else "; no cause recorded (NVML readings absent or normal)")
    return (f"below-expected: {e['ratio']:.2f}x the expected {e['figure']:,.0f} {e.get('unit') or unit or ''} "
            f"({where}), under its band of -{e['band']:.0%}{why}")


def annotate(rows: list[Result], pool: list[Result], environment=lambda env_id: None) -> list[Result]:
    """rows with their derived ``expected`` (and a `below-expected` warning where it applies).
    ``environment(env_id)`` returns a stored fingerprint (Store.environment)."""
    from gpuarena.analysis.rows.published import published_results

    published = published_results()
    recipes: dict[tuple, list[Result]] = {}      # the pool by recipe: only those can be the same recipe
    for q in pool:
        recipes.setdefault(recipe_key(q), []).append(q)
    envs: dict = {}
    out = []
    for r in rows:
        if eligible(r) is None:
            out.append(r)
            continue
        eid = r.env_id
        if eid not in envs:
            envs[eid] = environment(eid) if eid is not None else None
        e = expect(r, recipes.get(recipe_key(r), []), published, envs[eid], pool)
        if e is None:
            out.append(r)
            continue
        out.append(r.with_derived(expected=e, warnings=[flag_text(e, r.unit)] if e["below"] else []))
    return out


def recipe_key(r: Result) -> tuple:
    """What two results of one recipe share (expected_refs.same_recipe's fields of both): grouping the
    pool by it once keeps annotating N results linear, where comparing each with every other was not."""
    return (r.workload, r.workload_version, r.variant, r.gpus, _frozen(r.params))


def _frozen(x):
    """A hashable value equal where the JSON values are equal (1 and 1.0 alike, keys in any order)."""
    if isinstance(x, dict):
        return frozenset((k, _frozen(v)) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return tuple(_frozen(v) for v in x)
    return x


def physics_expectation(r: Result, gpu: catalog.GPU, pool: list[Result]) -> dict | None:
    """The workload's physics model's figure for r on gpu: {"value", "band", "how"} or None (each physics'
    ``expected``, registered once in analysis/physics/models.py)."""
    cls = registry.find(r.workload)
    physics = models.PHYSICS.get(cls.physics) if cls is not None else None
    if physics is None or physics.expected is None:
        return None
    out = physics.expected(r, gpu, pool)
    return out if out and out.get("value") else None
