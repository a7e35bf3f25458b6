"""`gpuarena doctor` as text: one line per check of every GPU (its figure, against the expected
figure and the host's other GPUs), the links, and each GPU's verdict below."""

from __future__ import annotations

from gpuarena.numbers import fmt_num
from gpuarena.report.text.table import as_json, render as table

COLUMNS = [("gpu", "GPU"), ("check", "check"), ("value", "figure"), ("expected", "vs expected"),
           ("peers", "vs host's GPUs"), ("flag", "flag")]


def _rows(v: dict) -> list[dict]:
    rows = []
    for g in v["gpus"]:
        for c in g["checks"]:
            rows.append({"gpu": g["device"], "check": c["check"],
                         "value": f"{fmt_num(c['value'])} {c['unit'] or ''}" if c["value"] else c["status"],
                         "expected": (f"{c['vs_expected']:.2f}x of {fmt_num(c['expected'])} ({c['basis']})"
                                      if c["expected"] else "-"),
                         "peers": f"{c['vs_peers']:.2f}x" if c["vs_peers"] is not None else "-",
                         "flag": "below-expected" if c["below"] else "slow-vs-peers" if c["peer_slow"] else ""})
    for link in v["links"]:
        rows.append({"gpu": "all", "check": link["check"], "value": (f"{fmt_num(link['busbw_gbs'])} GB/s bus"
                     if link.get("busbw_gbs") else link["status"]), "expected": "-", "peers": "-", "flag": ""})
    return rows


def render(v: dict, fmt: str) -> str:
    """The verdicts doctor's analysis returns (analysis.doctor.verdicts) as text."""
    if fmt == "json":
        return as_json(v)
    rows = _rows(v)
    cols = [c for c in COLUMNS if c[0] in ("gpu", "check", "value") or any(r[c[0]] not in ("-", "") for r in rows)]
    notes = [f"{g['device']} ({g.get('name') or '?'}): {g['verdict']}"
             + (f" -- {'; '.join(g['why'])}" if g["why"] else "") for g in v["gpus"]]
    if v["tiny"]:
        notes.append("tiny sizes on a CPU: these checks prove the install works, not how fast anything is")
    return table(cols, rows, fmt, title=f"gpuarena doctor: {v['verdict']}", notes=notes)
