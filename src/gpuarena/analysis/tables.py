"""One way to print every analysis table: a list of (key, header) columns over
row dicts, as a rich text table, a Markdown table or JSON.  Deterministic (a
fixed width, no colour) so golden-file tests can pin the text."""

from __future__ import annotations

import io
import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuarena.numbers import fmt_num  # one number format everywhere

FORMATS = ("table", "md", "json")


def cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return fmt_num(v)
    if isinstance(v, (list, tuple)):
        return "; ".join(map(str, v)) or "-"
    return str(v)


def render(columns: list[tuple[str, str]], rows: list[dict], fmt: str, title: str | None = None,
           data=None, notes: list[str] | None = None) -> str:
    """Text of a table.  json dumps `data` (default: the rows) with sorted keys."""
    if fmt == "json":
        return json.dumps(rows if data is None else data, indent=2, sort_keys=True, default=str) + "\n"
    notes = notes or []
    if fmt == "md":
        out = [f"### {title}", ""] if title else []
        out.append("| " + " | ".join(h for _, h in columns) + " |")
        out.append("|" + "---|" * len(columns))
        for r in rows:
            out.append("| " + " | ".join(cell(r.get(k)).replace("|", "\\|") for k, _ in columns) + " |")
        out += [""] + [f"- {n}" for n in notes] if notes else []
        return "\n".join(out) + "\n"
    t = Table(title=title, header_style="bold", title_justify="left")
    for _, h in columns:
        t.add_column(h, overflow="fold")
    for r in rows:
        t.add_row(*(Text(cell(r.get(k))) for k, _ in columns))  # cells are data, never rich markup
    buf = io.StringIO()
    con = Console(file=buf, width=220, color_system=None, force_terminal=False, legacy_windows=False)
    con.print(t)
    for n in notes:
        con.print(Text(n), soft_wrap=True)  # notes carry prices' sources and user text: never markup
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"
