"""Which GPU for a workload: like with like, measured before published before projected.

1. Candidates: finite single-GPU results in the database (never a diverged
   one) and published rows whose claim check passes (analysis.check), each
   with its precision class (the precision the arithmetic ran as), engine
   class (PyTorch eager, compiled, TensorRT, MXNet, ...) and settings
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

from gpuarena.analysis import physics as X
from gpuarena.analysis import precision as P
from gpuarena.analysis import projection as J
from gpuarena.analysis import rows as R
from gpuarena.analysis import whatif
from gpuarena.analysis.tables import render as _render
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry

BASES = ("measured", "published", "projected")
SETTINGS = ("seq_len", "image_size", "inference_steps")


def _request_of_published(text: str) -> str:
    p = (text or "").lower()
    for key, req in (("bf16", "bf16"), ("fp16", "fp16"), ("amp", "fp16"), ("mixed", "fp16"), ("tf32", "tf32"),
                     ("fp8", "fp8"), ("int8", "int8")):
        if key in p.replace("ampere", ""):
            return req
    return "default"


def candidates(store, workload: str) -> list[dict]:
    """Every result a ranking could rest on, with its class."""
    from gpuarena.analysis.check import check_claim

    out = []
    for r in store.results(workload=workload, status="ok"):
        if (r.get("gpus") or 1) != 1 or not X.is_finite_result(r) or R.is_search(r):
            continue
        g = catalog.find(R.gpu_of(r))
        if g is None:
            continue
        params = r.get("params") or {}
        pub = r.get("source") == "published"
        if pub:
            req = _request_of_published(r.get("precision"))
            engine = r.extra.engine or J.engine_class(r.extra.software or "")
            try:
                verdict = check_claim({"gpu": g.name, "workload": workload, "precision": req,
                                       "batch_size": params.get("batch_size") or 1,
                                       "throughput": r["throughput_median"],
                                       **{k: params.get(k) for k in ("seq_len", "image_size")},
                                       "steps": params.get("inference_steps")})["verdict"]
            except UserError:
                continue
            if verdict != "plausible":
                continue
        else:
            variants = frozenset(str(r.get("variant") or "seed").split("+"))
            req = P.request_of_variants(variants, r.get("precision"))
            engine = "PyTorch compiled" if "compile" in variants else "PyTorch eager"
        settings = tuple((k, params.get(k)) for k in SETTINGS if params.get(k) is not None)
        out.append({"gpu": g, "throughput": r["throughput_median"], "basis": "published" if pub else "measured",
                    "request": req, "class": (J.request_class(req), engine, settings), "unit": r.get("unit"),
                    "source": r.get("origin") if pub else
                    f"gpuarena, {r.get('origin') or 'run ' + str(r.get('run_id'))} ({r.get('variant')})",
                    "batch_size": params.get("batch_size"), "peak_memory": r.get("peak_memory_bytes")})
    return out


def _class_text(cls: tuple, request: str | None = None) -> str:
    prec, engine, settings = cls
    prec = request or prec
    return f"{P.NAMES.get(prec, prec)}, {engine}" + "".join(f", {k}={v}" for k, v in settings)


def _pick_class(cands: list[dict], precision: str | None, defaults: tuple) -> tuple[tuple, str]:
    """The class of the fastest finite measurement at the workload's default settings (else at any)."""
    if precision:
        want = J.request_class(P.request_of(precision))
        cands = [c for c in cands if c["class"][0] == want]
        if not cands:
            raise UserError(f"no finite result at {precision} to rank on")
    measured = [c for c in cands if c["basis"] == "measured"]
    measured = [c for c in measured if c["class"][2] == defaults] or measured
    if measured:
        best = max(measured, key=lambda c: c["throughput"])
        return best["class"], ""
    by_class: dict[tuple, set] = {}
    for c in cands:
        by_class.setdefault(c["class"], set()).add(c["gpu"].name)
    cls = max(by_class, key=lambda k: len(by_class[k]))
    return cls, f"no finite measurement here: ranked on published {_class_text(cls)} figures"


def _dominates(a: catalog.GPU, b: catalog.GPU, workload: str, request: str) -> bool:
    """a is at least as fast as b on paper: peak at the executed precision and bandwidth."""
    pa, pb = J._point(a, workload, request), J._point(b, workload, request)
    return bool(pa and pb) and pa[0] >= pb[0] and pa[1] >= pb[1]


def advise(store, workload: str, gpus: int = 1, budget: float | None = None, hours: float | None = None,
           min_memory: float | None = None, prices: dict | None = None, precision: str | None = None,
           include_consumer: bool = False, price_basis: str = "cloud") -> dict:
    """Rank the catalog for a workload.

    Returns {"workload", "gpus", "class", "fallback", "calibration", "rows": [{rank, gpu, basis, throughput,
    low, high, unit, precision, engine, source, scaling, price_usd, items_per_s_per_1000usd,
    cloud_usd_for_hours, items_per_joule, memory_gb, note}], "excluded": [{gpu, reason}],
    "other_classes": [...], "explanation"}.  Rows are sorted fastest first.
    """
    if not 1 <= gpus <= 100_000:
        raise UserError(f"--gpus {gpus}: must be between 1 and 100000")
    for name, v in (("--budget", budget), ("--hours", hours), ("--min-memory", min_memory)):
        if v is not None and not v > 0:
            raise UserError(f"{name} {v}: must be positive")
    own = registry.get(workload).advised_by    # registry.get: the UserError with a suggestion
    if own:
        raise UserError(f"{workload} is not ranked by per-item compute and traffic scaling; see {own}")
    cands = candidates(store, workload)
    if not cands:
        raise UserError(f"no finite measured or credible published {workload} result to advise from")
    wl_defaults = registry.get(workload).resolve_params({})
    defaults = tuple((k, wl_defaults[k]) for k in SETTINGS if k in wl_defaults)
    cls, fallback = _pick_class(cands, precision, defaults)
    mine = [c for c in cands if c["class"] == cls]
    request = max(mine, key=lambda c: c["throughput"])["request"]
    best: dict[str, dict] = {}
    for c in sorted(mine, key=lambda c: (BASES.index(c["basis"]), -c["throughput"])):
        best.setdefault(c["gpu"].name, c)
    refs = [(c["gpu"], c["throughput"]) for c in best.values()]
    settings = dict(cls[2])
    abc, how = J.calibrate(refs, workload, request, settings)
    band = J.band(workload, request, refs[0][0] if len({g.name for g, _ in refs}) == 1 else None)
    ref_batch = max(mine, key=lambda c: c["throughput"])["batch_size"] or 1
    params = X.workload_params(workload, {**_conditions(settings), "batch_size": ref_batch})
    pool = X.evidence(workload, store)
    # the smallest footprint measured for the workload: a card below it cannot run it at any batch tried
    need = min((c["peak_memory"] for c in cands if c["basis"] == "measured" and c["peak_memory"]), default=0)
    unit = next(iter(best.values()))["unit"]
    rows, excluded = [], []
    for g in catalog.priced(prices):
        if J.consumer(g) and not include_consumer:
            excluded.append({"gpu": g.name, "reason": "consumer card: left out of data-centre advice "
                                                       "(--include-consumer to rank it)"})
            continue
        if min_memory and g.memory_gb < min_memory:
            excluded.append({"gpu": g.name, "reason": f"{g.memory_gb:g} GB < {min_memory:g} GB"})
            continue
        if need and g.memory_gb * 1e9 < need:
            excluded.append({"gpu": g.name, "reason": f"{g.memory_gb:g} GB cannot hold the {need / 1e9:.1f} GB "
                                                       "of the smallest run measured"})
            continue
        c = best.get(g.name) or _twin(g, best)
        note = ""
        if c:
            thr, lo, hi, basis, src = c["throughput"], c["throughput"], c["throughput"], c["basis"], c["source"]
            if c["gpu"].name != g.name:
                note = f"same silicon as the {c['gpu'].short} (same die, peaks and bandwidth): its figure"
        else:
            thr = J.predict(abc, g, workload, request)
            if not thr:
                excluded.append({"gpu": g.name, "reason": f"no {P.NAMES.get(request, request)} peak to project with "
                                                           f"({g.architecture} has none)"})
                continue
            lim = X.limit(workload, g, request, params, pool=pool)
            if thr > lim.highest:
                note = (f"capped at what physics and evidence allow the {g.short} ({lim.highest:,.0f}: "
                        + ("the best attainment credibly reached" if lim.credible is not None else "its peak") + ")")
                thr = lim.highest * (1 - 1e-9)
            lo, hi, basis, src = thr * (1 - band), min(thr * (1 + band), lim.highest), "projected", how
        rows.append({"gpu": g.name, "g": g, "basis": basis, "throughput": thr, "low": lo, "high": hi,
                     "rank_value": thr, "unit": unit, "precision": P.NAMES.get(request, request), "engine": cls[1],
                     "source": src, "note": note})
    rows = _checked(rows, workload, request, params, store, excluded)
    _guard(rows, workload, request)
    _scale_and_price(rows, workload, gpus, budget, hours, excluded, ref_batch, price_basis)
    if workload == "llm-train":   # cards too small for the measured model; the measured multi-GPU efficiency
        from gpuarena.analysis.llm_advice import adjust

        rows, excluded = adjust(rows, excluded, store.results(workload=workload, status="ok"), gpus)
        for x in rows:
            if "contradicted" not in x["note"]:
                x["rank_value"] = x["throughput"]
    if not rows:
        raise UserError(f"no GPU to advise for {workload}: "
                        + ("; ".join(f"{e['gpu']}: {e['reason']}" for e in excluded[:3]) or "no data"))
    rows.sort(key=lambda x: (-round(x["rank_value"], 3), BASES.index(x["basis"])))
    for i, x in enumerate(rows, 1):
        x["rank"] = i
        x.pop("g", None)
    others = sorted({_class_text(c["class"]) for c in cands if c["class"] != cls})
    label = _class_text(cls, request)
    return {"workload": workload, "gpus": gpus, "class": label, "fallback": fallback, "request": request,
            "settings": settings, "batch_size": ref_batch,
            "calibration": how, "band": band, "rows": rows, "excluded": excluded, "other_classes": others,
            "explanation": explain(rows, workload, gpus, budget, label, fallback)}


def _conditions(settings: dict) -> dict:
    """Class settings as claim conditions (check's names)."""
    names = {"inference_steps": "steps"}
    return {names.get(k, k): v for k, v in settings.items()}


def _twin(g: catalog.GPU, best: dict[str, dict]) -> dict | None:
    """A figure of the same silicon (same die, peaks, bandwidth and SMs: the A800 is an A100 with NVLink
    cut), measured before published; None when no twin has one."""
    from gpuarena.analysis.ratio import identical_silicon

    twins = [c for c in best.values() if identical_silicon(c["gpu"], g)]
    return min(twins, key=lambda c: (BASES.index(c["basis"]), -c["throughput"])) if twins else None


def _checked(rows: list[dict], workload: str, request: str, params: dict, store, excluded: list) -> list[dict]:
    """Every projected row goes through check at the same conditions before it is ranked."""
    from gpuarena.analysis.check import check_claim

    keep = []
    for x in rows:
        if x["basis"] == "projected":
            claim = {"gpu": x["gpu"], "workload": workload, "precision": request, "throughput": x["throughput"],
                     **_conditions({k: v for k, v in params.items() if k in SETTINGS}),
                     "batch_size": params["batch_size"]}
            v = check_claim(claim, store)
            x["check"] = v["verdict"]
            if v["verdict"] != "plausible":
                excluded.append({"gpu": x["gpu"], "reason": f"projection rejected by check: {v['reason']}"})
                continue
        keep.append(x)
    return keep


def _guard(rows: list[dict], workload: str, request: str) -> None:
    """A projection never outranks the measurement of a card at least as fast on paper unless its band
    reaches down to that measurement."""
    measured = [r for r in rows if r["basis"] == "measured"]
    for x in rows:
        if x["basis"] != "projected":
            continue
        for m in measured:
            if x["rank_value"] > m["throughput"] and _dominates(m["g"], x["g"], workload, request) \
                    and x["low"] > m["throughput"]:
                x["rank_value"] = m["throughput"] * (1 - 1e-6)
                x["note"] = (f"ranked below the measured {m['g'].short}, at least as fast on paper: "
                             "its projection is contradicted by that measurement")


def _scale_and_price(rows, workload, gpus, budget, hours, excluded, batch_size, basis) -> None:
    from gpuarena.analysis.cost import per_dollar

    keep = []
    for x in rows:
        g = x["g"]
        scaling = 1.0
        if gpus > 1:
            if workload in whatif.gradient_sizes():
                p = whatif.predict(workload, g.name, [gpus], throughput=x["throughput"], batch_size=batch_size)
                scaling = p["rows"][0]["efficiency"]
            elif not registry.get(workload).trains:
                x["note"] = "; ".join(filter(None, [x["note"], f"{gpus} independent copies (no gradient "
                                                                 "exchange): linear"]))
            else:
                raise UserError(f"--gpus {gpus}: gpuarena has no interconnect model for {workload}'s gradients")
        total = x["throughput"] * gpus * scaling
        purchase = g.purchase.usd * gpus if g.purchase.usd else None
        cloud = g.cloud.usd * gpus * hours if (g.cloud.usd and hours) else None
        if budget is not None:
            spend = cloud if hours else purchase
            if spend is None or spend > budget:
                excluded.append({"gpu": g.name, "reason": f"no {'cloud' if hours else 'purchase'} price to check "
                                 "against the budget" if spend is None else f"${spend:,.0f} > budget ${budget:,.0f}"})
                continue
        price = g.price(basis)
        x.update({"scaling": scaling, "throughput": total, "low": x["low"] * gpus * scaling,
                  "high": x["high"] * gpus * scaling, "rank_value": x["rank_value"] * gpus * scaling,
                  "price_usd": price.usd * gpus if price.usd else None, "price_basis": basis,
                  "price_source": price.label if price.usd else f"unpriced: {price.source}",
                  "price_rankable": bool(price.usd) and price.rankable,
                  "per_dollar": per_dollar(total, price) / gpus if price.usd else None,
                  "items_per_s_per_1000usd": total / purchase * 1000 if purchase else None,
                  "cloud_usd_for_hours": cloud,
                  "items_per_joule": x["throughput"] / g.tdp_w if g.tdp_w else None, "memory_gb": g.memory_gb})
        keep.append(x)
    rows[:] = keep


PER_DOLLAR_TEXT = {"cloud": "per $ of cloud time (on-demand $/GPU-hour)", "purchase": "items/s per $1,000 of purchase"}


def explain(rows: list[dict], workload: str, gpus: int, budget: float | None, cls: str, fallback: str) -> str:
    fast = rows[0]
    s = (f"For {workload} on {gpus} GPU(s){f' within ${budget:,.0f}' if budget else ''}, ranked on {cls} figures: "
         f"the {catalog.match(fast['gpu']).short} is fastest at {fast['throughput']:,.0f} {fast['unit']} "
         f"({fast['basis']}, {fast['source']}).")
    if fallback:
        s += f" {fallback.capitalize()}."
    if len(rows) > 1:
        nxt = rows[1]
        s += (f" What would change it: the {catalog.match(nxt['gpu']).short} ({nxt['basis']}, "
              f"{nxt['throughput'] / fast['throughput']:.0%} of it")
        s += (f", band up to {nxt['high']:,.0f}) measuring above {fast['low']:,.0f}." if nxt["basis"] == "projected"
              else ") overtaking it in a measurement at the same settings.")
    priced = [x for x in rows if x.get("per_dollar") and x.get("price_rankable")]
    if priced:
        v = max(priced, key=lambda x: x["per_dollar"])
        basis = v["price_basis"]
        price = (f"${v['price_usd']:,.2f} per hour" if basis == "cloud" else f"${v['price_usd']:,.0f}")
        s += (f" Most throughput {PER_DOLLAR_TEXT[basis]}: the {catalog.match(v['gpu']).short}, "
              f"{v['throughput']:,.0f} {v['unit']} for {price} ({v['price_source']}) = {v['per_dollar']:,.0f} "
              f"{'items per $' if basis == 'cloud' else 'per $1,000'} ({v['basis']}), at "
              f"{v['throughput'] / fast['throughput']:.0%} of the fastest's speed.")
    unpriced = [catalog.match(x["gpu"]).short for x in rows if not x.get("price_usd")]
    if unpriced:
        s += f" Unpriced on this basis: {', '.join(unpriced)}."
    if fast["basis"] == "projected":
        s += " The top figure is a projection: measure before buying."
    return s


COLUMNS = [("rank", "#"), ("gpu", "GPU"), ("basis", "basis"), ("throughput", "items/s"), ("band", "band"),
           ("unit", "unit"), ("precision", "precision"), ("engine", "engine"), ("scaling", "scaling"),
           ("price_usd", "price $"), ("per_dollar", "per $"), ("items_per_joule", "items/J (TDP)"),
           ("memory_gb", "GB"), ("source", "source"), ("note", "note")]


def render(result: dict, fmt: str) -> str:
    if fmt == "json":
        return _render([], [], "json", data=result)
    rows = [{**x, "band": "" if x["basis"] != "projected" else f"{x['low']:,.0f}-{x['high']:,.0f}"}
            for x in result["rows"]]
    notes = [result["explanation"]]
    if result["other_classes"]:
        notes.append("Not set beside these (other precision, engine or settings): " + "; ".join(result["other_classes"]))
    return _render(COLUMNS, rows, fmt, title=f"GPUs for {result['workload']} x {result['gpus']}", notes=notes)
