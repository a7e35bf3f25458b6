"""The catalog as text (`gpuarena gpus`): a table that fits the terminal, with
the price sources below it; json, csv and md carry every field."""

from __future__ import annotations

import csv
import io
import json

from gpuarena.analysis.tables import render as table

# The terminal table: figures as the datasheets print them (3 significant digits), GB, TB/s, TFLOP/s.
COLUMNS = [("short", "GPU"), ("gb", "GB"), ("tbs", "TB/s"), ("fp32", "FP32"), ("tf32", "TF32"),
           ("bf16", "BF16"), ("fp8", "FP8"), ("nvlink", "NVLink"), ("tdp", "W"), ("price", "$")]
MD_COLUMNS = [("name", "GPU"), ("memory", "memory"), ("memory_bandwidth_gbs", "bandwidth GB/s"),
              ("fp64_peak", "FP64"), ("fp32_peak", "FP32"), ("tf32_peak", "TF32"), ("bf16_peak", "BF16"),
              ("fp16_peak", "FP16"), ("fp8_peak", "FP8"), ("int8_peak", "INT8 TOP/s"), ("nvlink_gbs", "NVLink GB/s"),
              ("tdp_w", "TDP W"), ("purchase_usd", "price $"), ("purchase_source", "price source"),
              ("cloud_usd_per_hr", "cloud $/GPU-h"), ("cloud_source", "cloud source"), ("spec_source", "spec source")]
NOTE = ("Peaks are dense TFLOP/s (INT8: TOP/s); NVLink is NVIDIA's total bidirectional figure per GPU; "
        "a price range is priced at its midpoint.")


def _g(x) -> str | None:
    """3 significant digits, no trailing zeros: 19.5, 156, 989, 1979 (not 1.98e+03)."""
    if x is None:
        return None
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def render(rows: list[dict], fmt: str) -> str:
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
                 nvlink=_g(r["nvlink_gbs"]), tdp=_g(r["tdp_w"]),
                 price=f"{r['purchase_usd']:,.0f}" if r["purchase_usd"] else None, cloud=_g(r["cloud_usd_per_hr"]))
    if fmt == "md":
        return table(MD_COLUMNS, shown, "md", title="GPU catalog", notes=[NOTE])
    sources = [f"{r['short']}: ${r['purchase_usd']:,.0f} from {r['purchase_source']} [{r['purchase_date']}]"
               for r in rows if r["purchase_usd"]]
    return table(COLUMNS, shown, "table", title="GPU catalog (`--format md` or json for every field)",
                 notes=[NOTE + " Cloud $/GPU-hour and every source: --format md.", *sources], compact=True)
