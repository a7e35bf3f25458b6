"""`gpuarena advise` as text: the ranked GPUs with their basis, band, price and note."""

from __future__ import annotations

from gpuarena.analysis.verbs.advise import Advice
from gpuarena.report.text.table import as_json, render as table

COLUMNS = [("rank", "#"), ("gpu", "GPU"), ("basis", "basis"), ("throughput", "items/s"), ("band", "band"),
           ("unit", "unit"), ("precision", "precision"), ("engine", "engine"), ("scaling", "scaling"),
           ("price_usd", "price $"), ("per_dollar", "per $"), ("items_per_joule", "items/J (TDP)"),
           ("memory_gb", "GB"), ("source", "source"), ("note", "note")]


def render(result: Advice, fmt: str) -> str:
    if fmt == "json":
        return as_json(result)
    rows = [{**x.model_dump(), "band": "" if x.basis != "projected" else f"{x.low:,.0f}-{x.high:,.0f}"}
            for x in result.rows]
    notes = [result.explanation]
    if result.other_classes:
        notes.append("Not set beside these (other precision, engine or settings): "
                     + "; ".join(result.other_classes))
    return table(COLUMNS, rows, fmt, title=f"GPUs for {result.workload} x {result.gpus}", notes=notes)
