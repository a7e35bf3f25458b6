"""`gpuarena cost` as text: throughput per dollar on one price basis (cloud or purchase), with
the assumptions, the price snapshots and what could not be priced below the table."""

from __future__ import annotations

from gpuarena.analysis.rows.common import fmt_params
from gpuarena.analysis.verbs.cost import Cost, CostRow
from gpuarena.data import catalog
from gpuarena.report.text.table import as_json, render as table

_LEAD = [("gpu", "GPU"), ("workload", "workload"), ("variant", "variant"), ("params", "params"),
         ("ran_on_gpus", "GPUs run on"), ("source", "source"), ("engine", "engine"), ("throughput", "items/s/GPU")]
_TAIL = [("items_per_joule", "items/J"), ("energy_basis", "energy from"), ("rel_items_per_joule", "items/J vs base")]
COLUMNS = {
    "cloud": _LEAD + [("price", "$/GPU-h"), ("per_dollar", "items per $"), ("rel_perf_per_price", "perf/$ vs base"),
                      ("usd_per_million_items", "$/M items")] + _TAIL + [("fleet_usd", "rent $")],
    "purchase": _LEAD + [("price", "price $"), ("per_dollar", "items/s per $1k"),
                         ("rel_perf_per_price", "perf/price vs base")] + _TAIL
                + [("tco_total", "TCO $"), ("tco_usd_per_million_items", "TCO $/M items")],
}


def _price_cell(r: CostRow) -> str:
    if r.price_usd is None:
        return "unpriced"
    low = " (low confidence)" if r.price_confidence == "low" else ""
    return (f"{r.price_usd:.2f}" if r.price_basis == "cloud" else f"{r.price_usd:,.0f}") + low


def _notes(result: Cost) -> list[str]:
    a = result.assumptions
    if a.basis == "cloud":
        notes = [f"Prices on one basis: on-demand cloud $ per GPU-hour (--price-basis purchase for $ per GPU). "
                 f"Rent: {a.gpus} GPU(s) over {a.years} years at 100% use; power and hosting are in the price"]
    else:
        notes = [f"Prices on one basis: {a.market} purchase $ per GPU (--price-basis cloud for $ per GPU-hour). "
                 f"TCO: {a.gpus} GPU(s) over {a.years} years at ${a.kwh_price}/kWh, PUE {a.pue}, "
                 f"hosting ${a.hosting_per_gpu_year}/GPU-year; power measured where stored, else TDP; "
                 "TCO $/M items assumes 100% utilisation"]
    notes += [f"price: {s}" for s in result.snapshots]
    notes += [f"unpriced: {catalog.match(u.gpu).short}: {u.reason}" for u in result.unpriced]
    return notes + [f"check: {f}" for f in result.flags]


def render(result: Cost, fmt: str) -> str:
    if fmt == "json":
        return as_json(result.model_dump(mode="json"))
    a = result.assumptions
    basis = a.basis
    rows = [{**r.model_dump(), "price": _price_cell(r), "params": fmt_params(r.params),
             "rel_perf_per_price": f"{r.rel_perf_per_price:.2f}x" if r.rel_perf_per_price else None,
             "rel_items_per_joule": f"{r.rel_items_per_joule:.2f}x" if r.rel_items_per_joule else None}
            for r in result.rows]
    notes = _notes(result)
    kind = "cloud $/GPU-hour" if basis == "cloud" else f"{a.market} purchase $"
    title = f"Cost ({kind}" + (f", baseline {a.baseline})" if a.baseline else ")")
    columns = COLUMNS[basis]
    if basis == "cloud" and any(r.usd_per_million_tokens_at_slo is not None for r in result.rows):
        at = [c for c, _ in columns].index("usd_per_million_items") + 1
        columns = columns[:at] + [("usd_per_million_tokens_at_slo", "cloud $/M tokens at SLO")] + columns[at:]
        notes.append("$/M tokens at SLO: the cloud price over the output tokens of requests that met every SLO "
                     "(endpoint-serve's goodput)")
    return table(columns, rows, fmt, title=title, notes=notes)
