"""What a GPU's throughput costs: per $1,000 of purchase price, per million
items at cloud prices, per joule, and the total cost of ownership of a fleet.

TCO over Y years for N GPUs = N x purchase + N x power_kW x 8766 h/yr x Y x PUE
x $/kWh + N x hosting $/GPU-year x Y.  Power is the measured mean where the
result has one, else the catalog TDP (said in `power_basis`).  Items per joule
likewise come from measured energy where there is some, else throughput / TDP.
With a baseline GPU, perf/price and items/J are also given relative to it:
that is the article's "performance/price 1.0x vs 1.18x" table.
"""

from __future__ import annotations

from gpuarena.analysis import rows as R
from gpuarena.analysis.tables import natural_key
from gpuarena.analysis.tables import render as _render
from gpuarena.data import catalog
from gpuarena.errors import UserError

HOURS_PER_YEAR = 8766          # 365.25 days
# Defaults are assumptions, not facts; every one is printed with the table.
DEFAULT_KWH_PRICE = 0.12       # $/kWh: a round figure for US commercial electricity; pass --kwh-price
DEFAULT_PUE = 1.5              # data-centre PUE; Uptime Institute surveys put the industry average near 1.5-1.6
DEFAULT_HOSTING = 0.0          # $/GPU-year for rack space, network, staff: site-specific, so 0 unless given


def tco(purchase_usd: float, power_w: float, n_gpus: int, years: float, kwh_price: float, pue: float,
        hosting_per_gpu_year: float) -> dict:
    """Fleet TCO parts in dollars: {"purchase", "energy", "hosting", "total"}."""
    purchase = purchase_usd * n_gpus
    energy = power_w / 1000 * n_gpus * HOURS_PER_YEAR * years * pue * kwh_price
    hosting = hosting_per_gpu_year * n_gpus * years
    return {"purchase": purchase, "energy": energy, "hosting": hosting, "total": purchase + energy + hosting}


def check_inputs(years: float, gpus: int, kwh_price: float, pue: float, hosting: float) -> None:
    from gpuarena.safeio import MIN_MAGNITUDE

    for name, x in (("--years", years), ("--kwh-price", kwh_price), ("--hosting-per-gpu-year", hosting)):
        if x != 0 and abs(x) < MIN_MAGNITUDE:   # 1e-320 years: a TCO per year of Infinity
            raise UserError(f"{name} {x!r}: too small to mean anything (at least {MIN_MAGNITUDE:g}, or 0)")
    if not 0 < years <= 30:
        raise UserError(f"--years {years}: must be in (0, 30]")
    if not 1 <= gpus <= 1_000_000:
        raise UserError(f"--gpus {gpus}: must be between 1 and 1000000")
    if not 0 <= kwh_price <= 10:
        raise UserError(f"--kwh-price {kwh_price}: must be in [0, 10] $/kWh")
    if not 1.0 <= pue <= 5.0:
        raise UserError(f"--pue {pue}: must be in [1, 5]")
    if not 0 <= hosting <= 1_000_000:
        raise UserError(f"--hosting-per-gpu-year {hosting}: must be in [0, 1000000]")


def cost_table(store, workload: str | None = None, years: float = 3, gpus: int = 1,
               kwh_price: float = DEFAULT_KWH_PRICE, pue: float = DEFAULT_PUE,
               hosting_per_gpu_year: float = DEFAULT_HOSTING, prices: dict | None = None,
               baseline: str | None = None) -> dict:
    """Cost figures per GPU and configuration (the newest ok result of each).

    Returns {"rows": [{gpu, workload, variant, params, source, throughput, unit, purchase_usd,
                       purchase_source, per_1000usd, rel_perf_per_price, cloud_usd_per_hr, cloud_source,
                       usd_per_million_items, items_per_joule, energy_basis, rel_items_per_joule,
                       power_w, power_basis, tco_purchase, tco_energy, tco_hosting, tco_total,
                       tco_usd_per_million_items}],
             "assumptions": {years, gpus, kwh_price, pue, hosting_per_gpu_year, baseline}}
    GPUs not in the catalog (e.g. a CPU) are left out.
    """
    check_inputs(years, gpus, kwh_price, pue, hosting_per_gpu_year)
    base = catalog.match(baseline).name if baseline else None
    cat = {g.name: g for g in catalog.priced(prices)}
    R.known_workload(store, workload)
    results = R.latest([r for r in store.results(workload=workload, status="ok") if r.get("throughput_median")])
    rows = []
    for r in results:
        g = cat.get(R.gpu_of(r))
        if g is None or R.is_search(r):
            continue   # a maximum-batch search times fewer denoising steps: its images are not the article's
        n_dev = r.get("gpus") or 1
        thr = r["throughput_median"] / n_dev            # per GPU
        measured_power = r.get("power_w_mean")
        power = measured_power if measured_power else g.tdp_w
        energy = r.get("energy_j_per_item")
        if energy:
            ipj, basis = 1.0 / energy, f"measured ({r.get('energy_source') or 'NVML'})"
        elif g.tdp_w:
            ipj, basis = thr / g.tdp_w, "TDP"
        else:
            ipj, basis = None, "unknown"
        row = {
            "gpu": g.name, "workload": r["workload"], "variant": r["variant"],
            "params": R.fmt_params(r.get("params")), "source": r.get("source"), "throughput": thr,
            "origin": r.get("origin") or (f"gpuarena run {r.get('run_id')}" if r.get("run_id") else None),
            "engine": R.engine_of(r),
            "unit": r.get("unit"), "purchase_usd": g.purchase.usd,
            "purchase_source": f"{g.purchase.source} [{g.purchase.date}]",
            "per_1000usd": thr / g.purchase.usd * 1000 if g.purchase.usd else None,
            "cloud_usd_per_hr": g.cloud.usd, "cloud_source": f"{g.cloud.source} [{g.cloud.date}]",
            "usd_per_million_items": g.cloud.usd / (thr * 3600) * 1e6 if g.cloud.usd else None,
            "items_per_joule": ipj, "energy_basis": basis,
            "power_w": power, "power_basis": "measured" if measured_power else "TDP",
        }
        if g.purchase.usd and power:
            t = tco(g.purchase.usd, power, gpus, years, kwh_price, pue, hosting_per_gpu_year)
            items = thr * gpus * HOURS_PER_YEAR * 3600 * years
            row.update({"tco_purchase": t["purchase"], "tco_energy": t["energy"], "tco_hosting": t["hosting"],
                        "tco_total": t["total"], "tco_usd_per_million_items": t["total"] / items * 1e6})
        rows.append(row)
    if not rows:
        raise UserError("no ok results on a catalog GPU" + (f" for workload {workload}" if workload else "")
                        + " (measure on a GPU, `gpuarena import` a bundle, or `gpuarena import --published`)")
    if base:
        for row in rows:
            ref = [x for x in rows if x["gpu"] == base and (x["workload"], x["variant"], x["params"]) ==
                   (row["workload"], row["variant"], row["params"])]
            if ref and ref[0]["per_1000usd"] and row["per_1000usd"]:
                row["rel_perf_per_price"] = row["per_1000usd"] / ref[0]["per_1000usd"]
            if ref and ref[0]["items_per_joule"] and row["items_per_joule"]:
                row["rel_items_per_joule"] = row["items_per_joule"] / ref[0]["items_per_joule"]
    rows.sort(key=lambda x: (x["workload"], x["variant"], natural_key(x["params"]), x["gpu"], x["source"] or ""))
    return {"rows": rows, "assumptions": {"years": years, "gpus": gpus, "kwh_price": kwh_price, "pue": pue,
                                          "hosting_per_gpu_year": hosting_per_gpu_year, "baseline": base}}


COLUMNS = [("gpu", "GPU"), ("workload", "workload"), ("variant", "variant"), ("params", "params"),
           ("source", "source"), ("engine", "engine"), ("throughput", "items/s/GPU"), ("purchase_usd", "price $"),
           ("per_1000usd", "items/s per $1k"), ("rel_perf_per_price", "perf/price vs base"),
           ("usd_per_million_items", "cloud $/M items"), ("items_per_joule", "items/J"),
           ("energy_basis", "energy from"), ("rel_items_per_joule", "items/J vs base"),
           ("tco_total", "TCO $"), ("tco_usd_per_million_items", "TCO $/M items")]


def render(result: dict, fmt: str) -> str:
    if fmt == "json":
        return _render([], [], "json", data=result)
    a = result["assumptions"]
    rows = [{**r, "rel_perf_per_price": f"{r['rel_perf_per_price']:.2f}x" if r.get("rel_perf_per_price") else None,
             "rel_items_per_joule": f"{r['rel_items_per_joule']:.2f}x" if r.get("rel_items_per_joule") else None}
            for r in result["rows"]]
    prices = sorted({f"{r['gpu']}: purchase {r['purchase_source']}" for r in result["rows"] if r["purchase_usd"]})
    notes = [f"TCO: {a['gpus']} GPU(s) over {a['years']} years at ${a['kwh_price']}/kWh, PUE {a['pue']}, "
             f"hosting ${a['hosting_per_gpu_year']}/GPU-year; power measured where stored, else TDP; "
             "TCO $/M items assumes 100% utilisation"] + [f"price: {p}" for p in prices]
    return _render(COLUMNS, rows, fmt, title="Cost" + (f" (baseline {a['baseline']})" if a["baseline"] else ""),
                   notes=notes)
