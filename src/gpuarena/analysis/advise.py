"""Which GPU for a workload: the catalog ranked by time, cost and energy.

Per catalog GPU the single-GPU throughput is, in order of preference:
measured (a measured or imported result in the database), published (a
published row), or projected: the roofline of the catalog peak for the
precision x the share of peak gpuarena measured for this workload at that
precision on another GPU (check.measured_efficiencies), taking the precision
that projects fastest.  Each row says which.  With --gpus N
> 1 the whatif model scales it (catalog bus bandwidth, no overlap).
"""

from __future__ import annotations

from gpuarena.analysis import rows as R
from gpuarena.analysis import whatif
from gpuarena.analysis.check import measured_efficiencies
from gpuarena.analysis.tables import render as _render
from gpuarena.numbers import fmt_num  # significant digits: 0.155, not 0.2
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry


def _best(results: list[dict], gpu: str, published: bool) -> dict | None:
    mine = [r for r in results if R.gpu_of(r) == gpu and (r.get("gpus") or 1) == 1
            and (r.get("source") == "published") == published]
    return max(R.finite_first(mine), key=lambda r: r["throughput_median"]) if mine else None


def advise(store, workload: str, gpus: int = 1, budget: float | None = None, hours: float | None = None,
           min_memory: float | None = None, prices: dict | None = None) -> dict:
    """Rank the catalog for a workload.

    Returns {"workload", "gpus", "rows": [{rank, gpu, basis ("measured"|"published"|"projected"),
             throughput (items/s for the N GPUs), unit, scaling, price_usd, items_per_s_per_1000usd,
             cloud_usd_for_hours, items_per_joule, memory_gb, note}], "excluded": [{gpu, reason}],
             "explanation": str}.  Rows are sorted fastest first.
    """
    if not 1 <= gpus <= 100_000:
        raise UserError(f"--gpus {gpus}: must be between 1 and 100000")
    for name, v in (("--budget", budget), ("--hours", hours), ("--min-memory", min_memory)):
        if v is not None and not v > 0:
            raise UserError(f"{name} {v}: must be positive")
    if workload not in registry.names():
        registry.get(workload)   # the UserError with a suggestion
    results = [r for r in store.results(workload=workload, status="ok")
               if r.get("throughput_median") and not R.is_search(r)]
    effs = [e for e in measured_efficiencies(store, workload).values() if e.get("flops_per_item")]
    rows, excluded = [], []
    for g in catalog.priced(prices):
        if min_memory and g.memory_gb < min_memory:
            excluded.append({"gpu": g.name, "reason": f"{g.memory_gb:g} GB < {min_memory:g} GB"})
            continue
        r = _best(results, g.name, published=False)
        basis, note = "measured", ""
        if r is None:
            r, basis = _best(results, g.name, published=True), "published"
            note = (r or {}).get("origin") or ""
        projections = [(g.peak(e["precision"]) * 1e12 * e["share"] / e["flops_per_item"], e)
                       for e in effs if g.peak(e["precision"])]
        fastest = max(projections, key=lambda x: x[0]) if projections else None
        if r is not None:
            thr, unit = r["throughput_median"], r.get("unit")
        elif fastest is not None:
            basis = "projected"
            thr, ref = fastest
            unit = ref.get("unit")
            note = f"{ref['share']:.0%} of {ref['precision']} peak, as measured on {ref['gpu']}"
        else:
            excluded.append({"gpu": g.name, "reason": "no measured, published or projectable figure"})
            continue
        scaling = 1.0
        if gpus > 1:
            if workload in whatif.gradient_sizes():
                p = whatif.predict(workload, g.name, [gpus], throughput=thr,
                                   batch_size=(r or ref or {}).get("params", {}).get("batch_size"))
                scaling = p["rows"][0]["efficiency"]
        total = thr * gpus * scaling
        price = g.purchase.usd * gpus if g.purchase.usd else None
        cloud = g.cloud.usd * gpus * hours if (g.cloud.usd and hours) else None
        if budget is not None:
            spend = cloud if hours else price
            if spend is None:
                excluded.append({"gpu": g.name, "reason": "no price to check against the budget"})
                continue
            if spend > budget:
                excluded.append({"gpu": g.name, "reason": f"${spend:,.0f} > budget ${budget:,.0f}"})
                continue
        rows.append({"gpu": g.name, "basis": basis, "throughput": total, "unit": unit, "scaling": scaling,
                     "price_usd": price, "items_per_s_per_1000usd": total / price * 1000 if price else None,
                     "cloud_usd_for_hours": cloud,
                     "items_per_joule": thr / g.tdp_w if g.tdp_w else None, "memory_gb": g.memory_gb, "note": note})
    if workload == "llm-train":
        from gpuarena.analysis.llm_advice import adjust

        rows, excluded = adjust(rows, excluded, results, gpus)
    if not rows:
        raise UserError(f"no GPU to advise for {workload}: "
                        + ("; ".join(f"{e['gpu']}: {e['reason']}" for e in excluded[:3]) or "no data"))
    # fastest first; on a tie a measured figure ranks above a published one, and both above a projection
    rows.sort(key=lambda x: (-round(x["throughput"], 3), ("measured", "published", "projected").index(x["basis"])))
    for i, x in enumerate(rows, 1):
        x["rank"] = i
    return {"workload": workload, "gpus": gpus, "rows": rows, "excluded": excluded,
            "explanation": explain(rows, workload, gpus, budget)}


def explain(rows: list[dict], workload: str, gpus: int, budget: float | None) -> str:
    fast = rows[0]
    priced = [x for x in rows if x["items_per_s_per_1000usd"]]
    value = max(priced, key=lambda x: x["items_per_s_per_1000usd"]) if priced else None
    green = max((x for x in rows if x["items_per_joule"]), key=lambda x: x["items_per_joule"], default=None)
    s = (f"For {workload} on {gpus} GPU(s){f' within ${budget:,.0f}' if budget else ''}, the "
         f"{fast['gpu']} is fastest at {fmt_num(fast['throughput'])} {fast['unit']} ({fast['basis']}).")
    if value and value is not fast:
        s += (f" The {value['gpu']} gives the most throughput per dollar "
              f"({fmt_num(value['items_per_s_per_1000usd'])} per $1,000, {value['basis']}), at "
              f"{value['throughput'] / fast['throughput']:.0%} of the fastest's speed.")
    if green and green is not fast:
        s += f" The {green['gpu']} does the most work per joule ({fmt_num(green['items_per_joule'])}, TDP-based)."
    if fast["basis"] == "projected":
        s += " Projected figures assume the measured share of peak carries over; measure before buying."
    return s


COLUMNS = [("rank", "#"), ("gpu", "GPU"), ("basis", "basis"), ("throughput", "items/s"), ("unit", "unit"),
           ("scaling", "scaling"), ("price_usd", "price $"), ("items_per_s_per_1000usd", "per $1k"),
           ("cloud_usd_for_hours", "cloud $"), ("items_per_joule", "items/J (TDP)"), ("memory_gb", "GB"),
           ("note", "note")]


def render(result: dict, fmt: str) -> str:
    if fmt == "json":
        return _render([], [], "json", data=result)
    return _render(COLUMNS, result["rows"], fmt, title=f"GPUs for {result['workload']} x {result['gpus']}",
                   notes=[result["explanation"]])
