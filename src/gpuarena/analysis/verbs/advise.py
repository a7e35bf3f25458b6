"""Which GPU for a workload: like with like, measured before published before projected.

1. Candidates: finite single-GPU results in the database (never a diverged
   one) and published rows whose claim check passes (analysis.check), each
   with its precision class (the precision the arithmetic ran as), engine
   class (rows/engine.py: PyTorch eager, compiled, TensorRT, MXNet, ...) and settings
   (sequence length, image size, steps).
2. One class is ranked: the one of the fastest finite measurement here, else
   the published class covering the most GPUs (said in `fallback`).  Rows of
   other classes are never set beside it (`other_classes` lists them).
3. Every catalog GPU gets its class figure: measured, else published, else
   projected by analysis.projection calibrated on that class, with the band
   its validation earned.  A GPU whose memory is below the peak memory the
   reference measured is refused; a projection is never ranked above the
   measurement of a card at least as fast on paper (same or higher peak and
   bandwidth) unless its band reaches down to it.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from gpuarena.analysis.physics import limits as X, models, projection as J
from gpuarena.analysis.physics.credible import evidence
from gpuarena.analysis.physics.roofline import is_finite_result, workload_params
from gpuarena.analysis.rows import common as R, precision as P
from gpuarena.analysis.rows.engine import engine_of
from gpuarena.analysis.rows.verdict import ClaimVerdict
from gpuarena.analysis.verbs.advise_rows import explain, scale_and_price
from gpuarena.analysis.physics.projection_bound import bounded
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry

BASES = ("measured", "published", "projected")
SETTINGS = ("seq_len", "image_size", "inference_steps")


def request_of_published(text: str) -> str:
    p = (text or "").lower()
    for key, req in (("bf16", "bf16"), ("fp16", "fp16"), ("amp", "fp16"), ("mixed", "fp16"), ("tf32", "tf32"),
                     ("fp8", "fp8"), ("int8", "int8")):
        if key in p.replace("ampere", ""):
            return req
    return "default"


def candidates(store, workload: str) -> list[dict]:
    """Every result a ranking could rest on, with its class."""
    from gpuarena.analysis.verbs.check import check_claim

    out = []
    for r in store.results(workload=workload, status="ok"):
        if r.gpus != 1 or not is_finite_result(r) or R.is_search(r):
            continue
        g = catalog.find(R.gpu_of(r))
        if g is None:
            continue
        params = r.params
        pub = r.source == "published"
        if pub:
            req = request_of_published(r.precision)
            try:
                verdict = check_claim({"gpu": g.name, "workload": workload, "precision": req,
                                       "batch_size": params.get("batch_size") or 1,
                                       "throughput": r.throughput_median,
                                       **{k: params.get(k) for k in ("seq_len", "image_size")},
                                       "steps": params.get("inference_steps")}).verdict
            except UserError:
                continue
            if verdict is not ClaimVerdict.PLAUSIBLE:
                continue
        else:
            variants = frozenset(r.variant.split("+"))
            req = P.request_of_variants(variants, r.precision)
        engine = engine_of(r)
        settings = tuple((k, params.get(k)) for k in SETTINGS if params.get(k) is not None)
        out.append({"gpu": g, "throughput": r.throughput_median, "basis": "published" if pub else "measured",
                    "request": req, "class": (J.request_class(req), engine, settings), "unit": r.unit,
                    "source": r.origin if pub else
                    f"gpuarena, {r.origin or 'run ' + str(r.run_id)} ({r.variant})",
                    "batch_size": params.get("batch_size"), "peak_memory": r.peak_memory_bytes})
    return out


def _class_text(cls: tuple, request: str | None = None) -> str:
    prec, engine, settings = request or cls[0], cls[1], cls[2]
    return f"{P.NAMES.get(prec, prec)}, {engine}" + "".join(f", {k}={v}" for k, v in settings)


Num = Union[int, float]          # a figure keeps its type in the JSON


class AdviceRow(BaseModel):
    """One ranked GPU: its figure of the class (measured, published or projected, with the band), scaled to
    the GPU count and priced on one basis.  decoder-training's measured multi-GPU efficiency may add figures
    (analysis/physics/llm_advice.py adjust), kept as given."""

    model_config = ConfigDict(extra="allow")
    rank: int
    gpu: str
    basis: Literal["measured", "published", "projected"]
    throughput: Num                           # items/s over all the GPUs
    low: Num
    high: Num
    rank_value: Num                           # what the rank sorts by (a contradicted projection's is lowered)
    unit: str
    precision: str
    engine: str
    source: str
    note: str = ""
    upper_bound: Optional[str] = None         # the cap a projection sits on, if it does
    check: Optional[ClaimVerdict] = None      # a projection's verdict from check
    scaling: Num = 1.0
    price_usd: Optional[Num] = None
    price_basis: str = "cloud"
    price_source: str = ""
    price_rankable: bool = False
    per_dollar: Optional[Num] = None
    items_per_s_per_1000usd: Optional[Num] = None
    cloud_usd_for_hours: Optional[Num] = None
    items_per_joule: Optional[Num] = None
    memory_gb: Optional[Num] = None


class Excluded(BaseModel):
    """A GPU left out of a ranking, and why."""

    gpu: str
    reason: str


class Advice(BaseModel):
    """`gpuarena advise`: the catalog ranked for one workload within one class, fastest first."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)
    workload: str
    gpus: int
    class_: str = Field(alias="class")       # the precision, engine and settings ranked on
    fallback: str
    request: str
    settings: dict[str, Any]
    batch_size: int
    calibration: str
    band: Num
    rows: list[AdviceRow]
    excluded: list[Excluded]
    other_classes: list[str]
    explanation: str


QUANTISED = ("fp8", "int8", "int4")     # BERT-Large's FP8 rung: 12% relative error (BENCHMARKS.md, session 8)


def _pick_class(cands: list[dict], precision: str | None, defaults: tuple) -> tuple[tuple, str]:
    """The class of the fastest finite measurement at the workload's default settings (else at any);
    unasked, never a quantised one (FP8, INT8 change the output) while another class is stored."""
    if precision:
        want = J.request_class(P.request_of(precision))
        cands = [c for c in cands if c["class"][0] == want]
        if not cands:
            raise UserError(f"no finite result at {precision} to rank on")
    cands = cands if precision else [c for c in cands if c["class"][0] not in QUANTISED] or cands
    measured = [c for c in cands if c["basis"] == "measured"]
    measured = [c for c in measured if c["class"][2] == defaults] or measured
    if measured:
        return max(measured, key=lambda c: c["throughput"])["class"], ""
    by_class: dict[tuple, set] = {}
    for c in cands:
        by_class.setdefault(c["class"], set()).add(c["gpu"].name)
    cls = max(by_class, key=lambda k: len(by_class[k]))
    return cls, f"no finite measurement here: ranked on published {_class_text(cls)} figures"


def _dominates(a: catalog.GPU, b: catalog.GPU, workload: str, request: str) -> bool:
    """a is at least as fast as b on paper: peak at the executed precision and bandwidth."""
    pa, pb = J.peak_point(a, workload, request), J.peak_point(b, workload, request)
    return bool(pa and pb) and pa[0] >= pb[0] and pa[1] >= pb[1]


def advise(store, workload: str, gpus: int = 1, budget: float | None = None, hours: float | None = None,
           min_memory: float | None = None, prices: dict | None = None, precision: str | None = None,
           include_consumer: bool = False, price_basis: str = "cloud") -> Advice:
    """Rank the catalog for a workload.

    Returns an Advice: its rows (AdviceRow) sorted fastest first, the GPUs left out (Excluded) and why,
    the other classes not set beside these, and the explanation.
    """
    _check_options(gpus, budget, hours, min_memory)
    own = registry.advised_by(workload)    # registry.get's UserError (with a suggestion) for a bad name
    if own:
        raise UserError(f"{workload} is not ranked by per-item compute and traffic scaling; see {own}")
    cands = candidates(store, workload)
    if not cands:
        raise UserError(f"no finite measured or credible published {workload} result to advise from")
    b = _basis(store, workload, cands, precision)
    # the smallest footprint measured for the workload: a card below it cannot run it at any batch tried
    need = min((c["peak_memory"] for c in cands if c["basis"] == "measured" and c["peak_memory"]), default=0)
    rows, excluded = [], []
    for g in catalog.priced(prices):
        why = _unfit(g, min_memory, need, include_consumer)
        row = None if why else _row(g, b)
        if why or isinstance(row, str):
            excluded.append({"gpu": g.name, "reason": why or row})
        else:
            rows.append(row)
    rows = _checked(rows, workload, b.request, b.params, store, excluded)
    _guard(rows, workload, b.request)
    scale_and_price(rows, workload, gpus, budget, hours, excluded, b.batch_size, price_basis)
    if models.DECODER_TRAINING.judges(workload):   # cards too small for the model; measured multi-GPU efficiency
        from gpuarena.analysis.physics.llm_advice import adjust

        rows, excluded = adjust(rows, excluded, store.results(workload=workload, status="ok"), gpus)
        for x in rows:
            if "contradicted" not in x["note"]:
                x["rank_value"] = x["throughput"]
    if not rows:
        raise UserError(f"no GPU to advise for {workload}: "    # the last stage's reasons (a budget) first
                        + ("; ".join(f"{e['gpu']}: {e['reason']}" for e in excluded[:-4:-1]) or "no data"))
    return _ranked(rows, excluded, cands, b, workload, gpus, budget)


def _check_options(gpus: int, budget, hours, min_memory) -> None:
    if not 1 <= gpus <= 100_000:
        raise UserError(f"--gpus {gpus}: must be between 1 and 100000")
    for name, v in (("--budget", budget), ("--hours", hours), ("--min-memory", min_memory)):
        if v is not None and not v > 0:
            raise UserError(f"{name} {v}: must be positive")


class _Basis(NamedTuple):
    """What every catalog row of one ranking is computed from."""
    workload: str
    cls: tuple                   # (precision class, engine, settings) ranked on
    fallback: str
    request: str
    best: dict                   # GPU name -> its best candidate of the class
    abc: tuple                   # the projection's (a, b, c)
    how: str                     # how it was calibrated
    band: float
    batch_size: int
    params: dict                 # the workload's params at the class's settings and batch
    pool: list                   # physics evidence
    unit: str


def _basis(store, workload: str, cands: list[dict], precision: str | None) -> _Basis:
    wl_defaults = registry.get(workload).resolve_params({})
    defaults = tuple((k, wl_defaults[k]) for k in SETTINGS if k in wl_defaults)
    cls, fallback = _pick_class(cands, precision, defaults)
    mine = [c for c in cands if c["class"] == cls]
    top = max(mine, key=lambda c: c["throughput"])
    best: dict[str, dict] = {}
    for c in sorted(mine, key=lambda c: (BASES.index(c["basis"]), -c["throughput"])):
        best.setdefault(c["gpu"].name, c)
    refs = [(c["gpu"], c["throughput"]) for c in best.values()]
    settings = dict(cls[2])
    abc, how = J.calibrate(refs, workload, top["request"], settings)
    band = J.band(workload, top["request"], refs[0][0] if len({g.name for g, _ in refs}) == 1 else None)
    batch = top["batch_size"] or 1
    params = workload_params(workload, {**_conditions(settings), "batch_size": batch})
    return _Basis(workload, cls, fallback, top["request"], best, abc, how, band, batch, params,
                  evidence(workload, store), next(iter(best.values()))["unit"])


def _unfit(g: catalog.GPU, min_memory: float | None, need: float, include_consumer: bool) -> str:
    """Why a card is left out before any figure is looked at; "" when it is not."""
    if J.consumer(g) and not include_consumer:
        return "consumer card: left out of data-centre advice (--include-consumer to rank it)"
    if min_memory and g.memory_gb < min_memory:
        return f"{g.memory_gb:g} GB < {min_memory:g} GB"
    if need and g.memory_gb * 1e9 < need:
        return f"{g.memory_gb:g} GB cannot hold the {need / 1e9:.1f} GB of the smallest run measured"
    return ""


def _row(g: catalog.GPU, b: _Basis) -> dict | str:
    """A card's figure of the class: measured, else published (its own or its twin's), else projected
    and capped at physics' limit; a string when there is none (the reason)."""
    c = b.best.get(g.name) or _twin(g, b.best)
    note, on = "", None
    if c:
        thr, lo, hi, basis, src = c["throughput"], c["throughput"], c["throughput"], c["basis"], c["source"]
        if c["gpu"].name != g.name:
            note = f"same silicon as the {c['gpu'].short} (same die, peaks and bandwidth): its figure"
    else:
        thr = J.predict(b.abc, g, b.workload, b.request)
        if not thr:
            return f"no {P.NAMES.get(b.request, b.request)} peak to project with ({g.architecture} has none)"
        lim = X.limit(b.workload, g, b.request, b.params, pool=b.pool)
        thr, on = bounded(thr, lim, b.abc, g, b.workload, b.request)
        note = ("" if on is None else "at the compute-peak ratio to its reference: upper bound" if "peak ratio" in on
                else f"capped at what physics and evidence allow the {g.short} ({lim.highest:,.0f}: {on}): upper bound")
        lo, hi = thr * (1 - b.band), thr if on else min(thr * (1 + b.band), lim.highest * (1 - 1e-9))
        basis, src = "projected", b.how
    return {"gpu": g.name, "g": g, "basis": basis, "throughput": thr, "low": lo, "high": hi,
            "rank_value": thr, "unit": b.unit, "precision": P.NAMES.get(b.request, b.request), "engine": b.cls[1],
            "source": src, "note": note, "upper_bound": on}


def _ranked(rows: list[dict], excluded: list[dict], cands: list[dict], b: _Basis, workload: str, gpus: int,
            budget: float | None) -> Advice:
    rows.sort(key=lambda x: (-round(x["rank_value"], 3), BASES.index(x["basis"])))
    for i, x in enumerate(rows, 1):
        x["rank"] = i
        x.pop("g", None)
    others = sorted({_class_text(c["class"]) for c in cands if c["class"] != b.cls})
    label = _class_text(b.cls, b.request)
    return Advice.model_validate({
        "workload": workload, "gpus": gpus, "class": label, "fallback": b.fallback, "request": b.request,
        "settings": dict(b.cls[2]), "batch_size": b.batch_size, "calibration": b.how, "band": b.band, "rows": rows,
        "excluded": excluded, "other_classes": others, "explanation": explain(rows, workload, gpus, budget, label,
                                                                               b.fallback)})


def _conditions(settings: dict) -> dict:
    """Class settings as claim conditions (check's names)."""
    names = {"inference_steps": "steps"}
    return {names.get(k, k): v for k, v in settings.items()}


def _twin(g: catalog.GPU, best: dict[str, dict]) -> dict | None:
    """A figure of the same silicon (same die, peaks, bandwidth and SMs: the A800 is an A100 with NVLink
    cut), measured before published; None when no twin has one."""
    from gpuarena.analysis.physics.ratio import identical_silicon

    twins = [c for c in best.values() if identical_silicon(c["gpu"], g)]
    return min(twins, key=lambda c: (BASES.index(c["basis"]), -c["throughput"])) if twins else None


def _checked(rows: list[dict], workload: str, request: str, params: dict, store, excluded: list) -> list[dict]:
    """Every projected row goes through check at the same conditions before it is ranked."""
    from gpuarena.analysis.verbs.check import check_claim

    keep = []
    for x in rows:
        if x["basis"] == "projected":
            claim = {"gpu": x["gpu"], "workload": workload, "precision": request, "throughput": x["throughput"],
                     **_conditions({k: v for k, v in params.items() if k in SETTINGS}),
                     "batch_size": params["batch_size"]}
            v = check_claim(claim, store)
            x["check"] = v.verdict
            if v.verdict is not ClaimVerdict.PLAUSIBLE:
                excluded.append({"gpu": x["gpu"], "reason": f"projection rejected by check: {v.reason}"})
                continue
            if v.credible_max:     # the band's top is a figure too: it stops where check stops
                x["high"] = min(x["high"], v.credible_max * (1 - 1e-9))
        keep.append(x)
    return keep


def _guard(rows: list[dict], workload: str, request: str) -> None:
    """A projection never outranks the measurement of a card at least as fast on paper unless its band
    reaches down to that measurement."""
    measured = [r for r in rows if r["basis"] == "measured"]
    for x in (r for r in rows if r["basis"] == "projected"):
        for m in measured:
            if x["rank_value"] > m["throughput"] and _dominates(m["g"], x["g"], workload, request) \
                    and x["low"] > m["throughput"]:
                x["rank_value"] = m["throughput"] * (1 - 1e-6)
                x["note"] = (f"ranked below the measured {m['g'].short}, at least as fast on paper: "
                             "its projection is contradicted by that measurement")
