"""What a GPU's throughput costs, on one price basis per table.

Basis ``cloud`` (the default): on-demand $ per GPU-hour, so items per dollar =
throughput x 3600 / price, $ per million items, and the rent of a fleet of N
GPUs over Y years at 100% use (N x $/h x 8766 h/yr x Y; power and hosting are
in the price).  Basis ``purchase``: $ per GPU, so items/s per $1,000 and the
total cost of ownership: TCO over Y years for N GPUs = N x purchase + N x
power_kW x 8766 h/yr x Y x PUE x $/kWh + N x hosting $/GPU-year x Y.  Power is
the measured mean per GPU where the result has one (a multi-GPU job stores its
devices' sum), else the catalog TDP (said in `power_basis`).  Items per joule likewise come from
measured energy where there is some and the mean power it implies is physical for the card (5-125% of its TDP) and
no higher than the result's own power samples reached (plus measure/energy.py's sampling
margin: bundles written before that module took one step of NVML's energy counter over a
window of a few ms as the window's energy) over a window of at least measure/energy.py's 1 s, else
throughput / TDP.  With a baseline GPU, perf per dollar and
items/J are also given relative to it: that is the article's
"performance/price 1.0x vs 1.18x" table.

A card without a price on the basis stays in the table as "unpriced", with the
reason; prices are never taken from another market to fill the gap.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, model_serializer

from gpuarena.analysis.rows import common as R
from gpuarena.analysis.rows.engine import engine_of
from gpuarena.analysis.rows.common import natural_key
from gpuarena.data import catalog
from gpuarena.data import prices as P
from gpuarena.errors import UserError
from gpuarena.measure.energy import POWER_AVERAGE_S, SAMPLING_MARGIN
from gpuarena.store.result import Result

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


def usd_per_million_tokens(usd_per_gpu_hour: float | None, tokens_per_s: float | None, gpus: int = 1) -> float | None:
    """Dollars per million tokens from a price per GPU-hour: gpus x price / (tokens/s x 3600) x 1e6.
    None without a price or without tokens (a load at which no request met the SLO)."""
    if not usd_per_gpu_hour or not tokens_per_s or tokens_per_s <= 0:
        return None
    return gpus * usd_per_gpu_hour / (tokens_per_s * 3600) * 1e6


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


def per_dollar(throughput: float, price: P.Price) -> float | None:
    """Items/s per $1,000 of purchase price, or items per $ of cloud time; None when unpriced."""
    if price.usd is None:
        return None
    return throughput / price.usd * 1000 if price.basis == "purchase" else throughput * 3600 / price.usd


PER_DOLLAR_UNIT = {"purchase": "items/s per $1k", "cloud": "items per $"}

# A cost row's keys that only some rows have: a served endpoint's $ per million tokens at the SLO (cloud
# basis), the TCO's parts (purchase basis, priced and with a power); absent, not null, where not computed.
SOMETIMES = ("usd_per_million_tokens_at_slo", "tco_purchase", "tco_energy", "tco_hosting", "tco_total",
             "tco_usd_per_million_items")


class CostRow(BaseModel):
    """One GPU and configuration (the newest ok result) on the table's price basis: throughput per GPU,
    per dollar and per joule, and the fleet's rent or TCO."""

    gpu: str
    segment: str
    workload: str
    variant: str
    params: dict[str, Any]
    ran_on_gpus: int                   # the job's GPUs (endpoint-serve: the server's)
    source: Optional[str]
    throughput: float                  # per GPU
    origin: Optional[str]
    engine: str
    unit: Optional[str]
    price_basis: str
    price_usd: Optional[float]
    price_unit: str
    price_market: Optional[str]
    price_confidence: Optional[str]
    price_label: Optional[str]
    per_dollar: Optional[float]
    rel_perf_per_price: Optional[float]     # against the baseline GPU's same configuration
    rel_items_per_joule: Optional[float]
    items_per_joule: Optional[float]
    energy_basis: str
    power_w: Optional[float]
    power_basis: str
    usd_per_million_items: Optional[float]
    fleet_usd: Optional[float]
    # the older keys, filled on their own basis only (a table never mixes markets)
    purchase_usd: Optional[float]
    purchase_source: Optional[str]
    per_1000usd: Optional[float]
    cloud_usd_per_hr: Optional[float]
    cloud_source: Optional[str]
    # SOMETIMES: left out of the dump unless set
    usd_per_million_tokens_at_slo: Optional[float] = None
    tco_purchase: Optional[float] = None
    tco_energy: Optional[float] = None
    tco_hosting: Optional[float] = None
    tco_total: Optional[float] = None
    tco_usd_per_million_items: Optional[float] = None

    @model_serializer(mode="wrap")
    def _without_unset(self, handler):
        out = handler(self)
        for k in SOMETIMES:
            if k not in self.model_fields_set:
                out.pop(k, None)
        return out


class CostAssumptions(BaseModel):
    """What the table assumed, printed with it."""

    years: int | float                 # as given: 3 years print as 3, 3.0 (the CLI's) as 3.0
    gpus: int
    kwh_price: int | float
    pue: int | float
    hosting_per_gpu_year: int | float
    baseline: Optional[str]
    basis: str
    market: str


class Unpriced(BaseModel):
    """A card in the table without a price on its basis, and why."""

    gpu: str
    reason: str


class Cost(BaseModel):
    """What `gpuarena cost` computes; ``--format json`` prints its model_dump(mode="json")."""

    rows: list[CostRow]
    assumptions: CostAssumptions
    snapshots: list[str]               # one line per price snapshot in the table, naming its cards
    unpriced: list[Unpriced]
    flags: list[str]


def cost_table(store, workload: str | None = None, years: float = 3, gpus: int = 1,
               kwh_price: float = DEFAULT_KWH_PRICE, pue: float = DEFAULT_PUE,
               hosting_per_gpu_year: float = DEFAULT_HOSTING, prices: dict | None = None,
               baseline: str | None = None, basis: str = P.DEFAULT_BASIS) -> Cost:
    """Cost figures per GPU and configuration (the newest ok result of each), on one price basis (see Cost).
    GPUs not in the catalog (e.g. a CPU) are left out.
    """
    P.check_basis(basis)
    check_inputs(years, gpus, kwh_price, pue, hosting_per_gpu_year)
    base = catalog.match(baseline).name if baseline else None
    cat = {g.name: g for g in catalog.priced(prices, basis=basis)}
    R.known_workload(store, workload)
    ok = R.latest([r for r in store.results(workload=workload, status="ok") if r.throughput_median])
    results = R.finite(ok)      # a diverged computation has no cost per item
    rows = []
    for r in results:
        g = cat.get(R.gpu_of(r))
        if g is None or R.is_search(r):
            continue   # a maximum-batch search times fewer denoising steps: its images are not the article's
        rows.append(_row(r, g, basis, years, gpus, kwh_price, pue, hosting_per_gpu_year))
    if not rows:
        raise UserError("no ok results on a catalog GPU" + (f" for workload {workload}" if workload else "")
                        + " (measure on a GPU, `gpuarena import` a bundle, or `gpuarena import --published`)")
    if base:
        for row in rows:
            ref = [x for x in rows if x.gpu == base and (x.workload, x.variant, x.params) ==
                   (row.workload, row.variant, row.params)]
            if ref and ref[0].per_dollar and row.per_dollar:
                row.rel_perf_per_price = row.per_dollar / ref[0].per_dollar
            if ref and ref[0].items_per_joule and row.items_per_joule:
                row.rel_items_per_joule = row.items_per_joule / ref[0].items_per_joule
    rows.sort(key=lambda x: (x.workload, x.variant, natural_key(R.fmt_params(x.params)), x.gpu, x.source or ""))
    in_table = [cat[n] for n in dict.fromkeys(x.gpu for x in rows)]
    return Cost(rows=rows,
                assumptions=CostAssumptions(years=years, gpus=gpus, kwh_price=kwh_price, pue=pue,
                                            hosting_per_gpu_year=hosting_per_gpu_year, baseline=base, basis=basis,
                                            market=catalog.table_market(prices, basis)),
                snapshots=P.sources([(g.short, g.price(basis)) for g in in_table]),
                unpriced=[Unpriced(gpu=g.name, reason=g.price(basis).source) for g in in_table
                          if g.price(basis).usd is None],
                flags=[f["text"] for f in P.order_flags(in_table, basis)] + (
                    [f"{len(ok) - len(results)} result(s) left out: their output was not finite (NaN/inf)"]
                    if len(results) < len(ok) else []))


# The mean power per GPU a measured energy figure may imply, as shares of the card's TDP: below 5% no
# GPU is running a workload (the H200 in docs/data/h200-s6-doctor-2026-12-01.json read 134.6 W, 19%,
# before its timed window), above 125% the board's power cap (700 W on an H200; NVML's max power
# sample reads a few W over it, 702.6 W there) would have throttled it first.
POWER_BAND = (0.05, 1.25)


def _physical_power(watts: float | None, g: catalog.GPU) -> bool:
    lo, hi = POWER_BAND
    return bool(watts) and (not g.tdp_w or lo * g.tdp_w <= watts <= hi * g.tdp_w)


def _window_s(r: Result) -> float | None:
    """Seconds of the telemetry window the energy covers: measure/energy.py's record, or for a result
    stored before it, the last power sample's time (taken as the window closed)."""
    record = r.extra.energy if isinstance(r.extra.energy, dict) else {}
    if record.get("window_s"):
        return float(record["window_s"])
    times = [s.t for s in r.telemetry or []]
    return max(times) if times else None


def _items_per_joule(r: Result, g: catalog.GPU, thr: float, n_dev: int) -> tuple[float | None, str]:
    """Items per joule and its basis: the measured energy where the mean power it implies is physical
    for the card and (for a result stored before measure/energy.py checked it) within what the result's
    own power samples read, else throughput / TDP (the basis says which, and why)."""
    energy, why = r.energy_j_per_item, ""
    if energy and (window := _window_s(r)) is not None and window < POWER_AVERAGE_S:
        # measure/energy.py stores none for such a window since session 13; one stored before it is not used
        why = (f"; the measured energy covers a {window:.2g} s window, under the {POWER_AVERAGE_S:g} s NVML needs "
               "(its counter steps every 100 ms, its power is a 1 s average), not used")
        energy = None
    if energy:
        # NVML read the job's r.gpus devices (one per rank); a served endpoint's server_gpus are read
        # through the one local GPU, each taken to draw as it does
        implied = energy * r.throughput_median / r.gpus
        # a result with extra.energy had its energy checked against its samples when measured (measure/energy.py)
        sampled = r.power_w_max / r.gpus * (1 + SAMPLING_MARGIN) if r.power_w_max and not r.extra.energy else None
        if _physical_power(implied, g) and (sampled is None or implied <= sampled):
            return r.gpus / (energy * n_dev), f"measured ({r.energy_source or 'NVML'})"
        why = (f"; the measured {energy:.3g} J per item at {r.throughput_median / r.gpus:,.4g}/s implies "
               f"{implied:,.3g} W per GPU "
               + (f"on a {g.tdp_w:g} W card" if not _physical_power(implied, g) else
                  f"above the {r.power_w_max / r.gpus:,.4g} W its power samples reached") + ", not used")
    if g.tdp_w:
        return thr / g.tdp_w, "TDP" + why
    return None, "unknown" + why


def _row(r: Result, g: catalog.GPU, basis: str, years: float, gpus: int, kwh_price: float, pue: float,
         hosting: float) -> CostRow:
    n_dev = r.gpus * (r.extra.server_gpus or 1)   # endpoint-serve: the server's GPUs
    thr = r.throughput_median / n_dev            # per GPU
    # NVML's figures of a multi-GPU job are its ranks' devices summed (runner/rank.py): per GPU, their mean
    mean_w = r.power_w_mean / r.gpus if r.power_w_mean else None
    measured_power = mean_w if _physical_power(mean_w, g) else None
    power = measured_power if measured_power else g.tdp_w
    ipj, ebasis = _items_per_joule(r, g, thr, n_dev)
    price = g.price(basis)
    usd = price.usd
    row = {
        "gpu": g.name, "segment": g.segment, "workload": r.workload, "variant": r.variant,
        "params": dict(r.params), "ran_on_gpus": n_dev, "source": r.source, "throughput": thr,
        "origin": r.origin or (f"gpuarena run {r.run_id}" if r.run_id else None),
        "engine": engine_of(r), "unit": r.unit,
        "price_basis": basis, "price_usd": usd, "price_unit": P.UNIT[basis], "price_market": price.market,
        "price_confidence": price.confidence if usd is not None else None, "price_label": price.label,
        "per_dollar": per_dollar(thr, price), "rel_perf_per_price": None, "rel_items_per_joule": None,
        "items_per_joule": ipj, "energy_basis": ebasis,
        "power_w": power, "power_basis": "measured" if measured_power else "TDP",
        "usd_per_million_items": None, "fleet_usd": None,
        # the older keys, filled on their own basis only (a table never mixes markets)
        "purchase_usd": usd if basis == "purchase" else None, "purchase_source": price.label,
        "per_1000usd": per_dollar(thr, price) if basis == "purchase" else None,
        "cloud_usd_per_hr": usd if basis == "cloud" else None, "cloud_source": price.label,
    }
    items = thr * gpus * HOURS_PER_YEAR * 3600 * years
    if basis == "cloud" and usd is not None:
        row["fleet_usd"] = usd * gpus * HOURS_PER_YEAR * years
        row["usd_per_million_items"] = usd / (thr * 3600) * 1e6
        if r.extra.server_gpus is not None:   # a served endpoint: only tokens of requests within every SLO count
            row["usd_per_million_tokens_at_slo"] = usd_per_million_tokens(usd, r.extra.goodput_tokens_per_s, n_dev)
    elif basis == "purchase" and usd is not None and power:
        t = tco(usd, power, gpus, years, kwh_price, pue, hosting)
        row.update({"tco_purchase": t["purchase"], "tco_energy": t["energy"], "tco_hosting": t["hosting"],
                    "tco_total": t["total"], "tco_usd_per_million_items": t["total"] / items * 1e6,
                    "fleet_usd": t["total"], "usd_per_million_items": t["total"] / items * 1e6})
    return CostRow(**row)
