"""`gpuarena check --vs --ratio` as text: each ratio claim, what the specs (or the interconnect
model) allow, and the verdict."""

from __future__ import annotations

from gpuarena.data import catalog
from gpuarena.report.text.table import as_json, render as table

COLUMNS = [("gpu", "GPU"), ("vs", "vs"), ("kind", "claim"), ("claimed_text", "claimed"),
           ("expected_text", "expected"), ("verdict", "verdict"), ("reason", "reason")]


def _claimed(r: dict) -> str:
    if "claimed" in r:
        same = r["claimed_high"] == r["claimed"]
        return f"{r['claimed']:.3f}" if same else f"{r['claimed']:.3f}-{r['claimed_high']:.3f}"
    if r["claimed_low"] == r["claimed_high"]:
        return f"{r['claimed_low']:.2f}x"
    return f"{r['claimed_low']:.2f}-{r['claimed_high']:.2f}x"


def render(rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return as_json(rows)
    shown = []
    for r in rows:
        expected = ("-" if "expected_low" in r and r["expected_low"] is None     # no ratio: a card cannot serve it
                    else f"{r['expected_low']:.3f}-{r['expected_high']:.3f}" if "expected_low" in r
                    else f"{r['modelled']:.2f}x")
        shown.append({**r, "gpu": catalog.match(r["gpu"]).short, "vs": catalog.match(r["vs"]).short,
                      "claimed_text": _claimed(r), "expected_text": expected})
    return table(COLUMNS, shown, fmt, title="Ratio claims judged against the specs")
