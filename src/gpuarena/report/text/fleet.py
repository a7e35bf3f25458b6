"""`gpuarena fleet` as text: the outliers (or every GPU and link) of many hosts' runs of one suite,
each against the fleet's median, with the cases some host has no result for."""

from __future__ import annotations

from gpuarena.analysis.verbs.doctor import FleetVerdicts
from gpuarena.analysis.verbs.fleet import PRACTICAL, Z, Fleet, FleetCase
from gpuarena.numbers import fmt_num
from gpuarena.report.text.table import as_json, render as table

COLUMNS = [("case", "case"), ("what", "GPU or link"), ("value", "figure"), ("ratio", "vs median"), ("z", "MADs"),
           ("n", "fleet")]


def case_label(c: FleetCase) -> str:
    """'H200: matmul dtype=bf16': the GPU model, the workload, its variant if not the plain one, its parameters."""
    params = " ".join(f"{k}={v}" for k, v in (c.params or {}).items())
    gpu = str(c.gpu or "?").replace("NVIDIA ", "")
    variant = c.variant if c.variant != "seed" else ""
    return f"{gpu}: " + " ".join(x for x in (c.workload, variant, params) if x)


def _rows(fleet: Fleet, show_all: bool) -> list[dict]:
    rows = []
    for c in fleet.cases:
        for unit, x in sorted(c.units.items(), key=lambda kv: kv[1].ratio):
            if x.outlier or show_all:
                rows.append({"case": case_label(c), "what": unit,
                             "value": f"{fmt_num(x.value)} {c.unit or ''}", "ratio": f"{x.ratio:.3f}",
                             "z": f"{x.z:+.1f}" if x.z is not None else "(MAD 0)",
                             "n": f"{c.n} (median {fmt_num(c.median)})"})
    return rows


def render(fleet: Fleet, fmt: str, show_all: bool = False) -> str:
    """The fleet analysis (analysis.fleet.analyse; with each host's verdicts and the units named, a
    FleetVerdicts) as text."""
    if fmt == "json":
        return as_json(fleet)
    notes = [f"{len(fleet.hosts)} host(s), {len(fleet.cases)} case(s); "
             f"flagged: {len(fleet.flagged_gpus)} GPU(s), {len(fleet.flagged_links)} link(s) "
             f"(more than {Z:g} scaled MADs and {PRACTICAL:.0%} below the fleet median)"]
    for c in fleet.cases:
        missing = c.missing_hosts
        if missing:
            notes.append(f"incomplete: {case_label(c)} has no result from {', '.join(missing[:8])}"
                         + (f" and {len(missing) - 8} more" if len(missing) > 8 else ""))
    named = fleet.named if isinstance(fleet, FleetVerdicts) else None
    gpus, links = (named.gpus, named.links) if named else ([], [])
    for kind, units in (("gpu", gpus), ("link", links)):
        for x in units:
            notes.append(f"named {kind}: {x.unit} -- {'; '.join(x.why)}")
    if not gpus and not links:
        notes.append("no GPU or link named: every one within expected and the fleet's spread (exit code 0)")
    else:
        notes.append(f"{len(gpus)} GPU(s) and {len(links)} link(s) named (exit code 1)")
    title = "Fleet: every GPU and link" if show_all else "Fleet: outliers (slow GPUs and links)"
    return table(COLUMNS, _rows(fleet, show_all), fmt, title=title, notes=notes)
