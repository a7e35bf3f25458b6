"""The catalog as text (`gpuarena gpus`): a table that fits the terminal, with
the price sources below it; json and csv carry every field.  The table and md
show prices on one basis (cloud $/GPU-hour by default, or purchase $): a card
without a price on it says "unpriced", and the price's source, date, market and
confidence are listed under the table."""

from __future__ import annotations

import csv
import io
import json

from gpuarena.report.text.table import render as table
from gpuarena.data import catalog
from gpuarena.data import prices as P
from gpuarena.data.prices import Price

# The terminal table: figures as the datasheets print them (3 significant digits), GB, TB/s, TFLOP/s.
COLUMNS = [("short", "GPU"), ("gb", "GB"), ("tbs", "TB/s"), ("fp32", "FP32"), ("tf32", "TF32"),
           ("bf16", "BF16"), ("fp8", "FP8"), ("nvlink", "NVLink"), ("tdp", "W"), ("seg", "segment"), ("price", "PRICE")]
MD_COLUMNS = [("name", "GPU"), ("segment", "segment"), ("memory", "memory"), ("memory_bandwidth_gbs", "bandwidth GB/s"),
              ("fp64_peak", "FP64"), ("fp32_peak", "FP32"), ("tf32_peak", "TF32"), ("bf16_peak", "BF16"),
              ("fp16_peak", "FP16"), ("fp8_peak", "FP8"), ("int8_peak", "INT8 TOP/s"), ("nvlink_gbs", "NVLink GB/s"),
              ("tdp_w", "TDP W"), ("price", "PRICE"), ("price_source", "price source"), ("spec_source", "spec source")]
HEAD = {"cloud": "cloud $/GPU-h", "purchase": "purchase $"}
NOTE = ("Peaks are dense TFLOP/s (INT8: TOP/s); NVLink is NVIDIA's total bidirectional figure per GPU. "
        "Prices on one basis: {what} (--price-basis {other} for the other); 'unpriced' = no price on this basis "
        "in the catalog's snapshot, never filled from another market.")


def _g(x) -> str | None:
    """3 significant digits, no trailing zeros: 19.5, 156, 989, 1979 (not 1.98e+03)."""
    if x is None:
        return None
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def _price(r: dict, basis: str) -> str:
    usd = r[f"{basis}_usd"]
    if usd is None:
        return "unpriced"
    return f"{usd:.2f}" if basis == "cloud" else f"{usd:,.0f}"


def render(rows: list[dict], fmt: str, basis: str = "cloud") -> str:
    if fmt == "json":
        return json.dumps(rows, indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else [])
        w.writeheader()
        w.writerows(rows)
        return buf.getvalue()
    shown = [{**r, "memory": f"{r['memory_gb']:g} GB {r['memory_type']}"} for r in rows]
    for r in shown:
        r.update(gb=_g(r["memory_gb"]), tbs=_g(r["memory_bandwidth_gbs"] and r["memory_bandwidth_gbs"] / 1000),
                 fp32=_g(r["fp32_peak"]), tf32=_g(r["tf32_peak"]), bf16=_g(r["bf16_peak"]), fp8=_g(r["fp8_peak"]),
                 nvlink=_g(r["nvlink_gbs"]), tdp=_g(r["tdp_w"]), seg="consumer" if r["segment"] == "consumer" else "",
                 price=_price(r, basis),
                 price_source=(f"{r[f'{basis}_source']} [{r[f'{basis}_date']}, {r[f'{basis}_market']}, "
                               f"{r[f'{basis}_confidence']} confidence]") if r[f"{basis}_usd"] is not None
                 else f"unpriced: {r[f'{basis}_source']}")
    other = "purchase" if basis == "cloud" else "cloud"
    what = "on-demand cloud $ per GPU-hour" if basis == "cloud" else "purchase $ per GPU"
    note = NOTE.format(what=what, other=other)
    cols = [(k, HEAD[basis] if h == "PRICE" else h) for k, h in (MD_COLUMNS if fmt == "md" else COLUMNS)]
    if fmt == "md":
        return table(cols, shown, "md", title="GPU catalog", notes=[note])
    sources = P.sources([(r["short"], Price(r[f"{basis}_usd"], r[f"{basis}_source"], r[f"{basis}_date"],
                                            r[f"{basis}_market"], r[f"{basis}_confidence"])) for r in rows])
    return table(cols, shown, "table", title="GPU catalog (`--format md` or json for every field and source)",
                 notes=[note, *sources], compact=True)


def catalog_rows(gpus: tuple[catalog.GPU, ...] | None = None) -> list[dict]:
    """The catalog as flat rows, every figure with its source (`gpuarena gpus`)."""
    out = []
    for g in gpus or catalog.load():
        out.append({
            "name": g.name, "short": g.short, "architecture": g.architecture, "memory_gb": g.memory_gb,
            "memory_type": g.memory_type, "memory_bandwidth_gbs": g.memory_bandwidth_gbs,
            **{f"{p}_peak": g.peaks.get(p) for p in catalog.PEAK_COLUMNS},
            "nvlink_gbs": g.nvlink_gbs, "pcie_gen": g.pcie_gen, "tdp_w": g.tdp_w,
            "segment": g.segment,
            **{f"{b}_{k}": getattr(g.price(b), k) for b in ("purchase", "cloud")
               for k in ("usd", "market", "date", "confidence", "source")},
            "cloud_usd_per_hr": g.cloud.usd,
            "spec_source": g.source, "note": g.note,
        })
    return out
