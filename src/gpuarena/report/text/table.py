"""One way to print every analysis table: a list of (key, header) columns over
row dicts, as a rich text table, a Markdown table or JSON.  No colour; the text
table fits the terminal ($COLUMNS, else 80 when piped): one too wide is folded
into one block per row.  md and json keep every column whole."""

from __future__ import annotations

import io
import json

from pydantic import BaseModel
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuarena.numbers import fmt_num  # one number format everywhere
from gpuarena.report.mdtext import inert
from gpuarena.textfit import natural_width, records, terminal_width

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
           data=None, notes: list[str] | None = None, compact: bool = False) -> str:
    """Text of a table.  json dumps `data` (default: the rows) with sorted keys; `compact`
    draws the text table without vertical rules (more columns fit)."""
    if fmt == "json":
        return as_json(rows if data is None else data)
    notes = notes or []
    if fmt == "md":
        out = [f"### {inert(title)}", ""] if title else []   # every text may come from data: never HTML or a link
        out.append("| " + " | ".join(inert(h) for _, h in columns) + " |")
        out.append("|" + "---|" * len(columns))
        for r in rows:
            out.append("| " + " | ".join(inert(cell(r.get(k))) for k, _ in columns) + " |")
        out += [""] + [f"- {inert(n)}" for n in notes] if notes else []
        return "\n".join(out) + "\n"
    t = Table(title=title, header_style="bold", title_justify="left",
              **({"box": box.SIMPLE, "padding": (0, 1, 0, 0)} if compact else {}))
    for _, h in columns:
        t.add_column(h, overflow="fold")
    for r in rows:
        t.add_row(*(Text(cell(r.get(k))) for k, _ in columns))  # cells are data, never rich markup
    width = terminal_width()
    buf = io.StringIO()
    con = Console(file=buf, width=width, color_system=None, force_terminal=False, legacy_windows=False)
    if natural_width(t) <= width:
        con.print(t)
    else:
        lines = ([title] if title else []) + records([h for _, h in columns],
                                                     [[cell(r.get(k)) for k, _ in columns] for r in rows], width)
        con.print(Text("\n".join(lines)), soft_wrap=True)
    for n in notes:
        con.print(Text(n))  # notes carry prices' sources and user text: never markup
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def as_json(data) -> str:
    """An analysis' data as JSON: sorted keys, anything else (a date, a path) as its text.  A typed result
    (a pydantic model: check's, advise's, whatif's) is its ``model_dump(mode="json")`` with the keys its
    builder set, so the JSON is what the dict it replaced gave."""
    return json.dumps(_plain(data), indent=2, sort_keys=True, default=_plain) + "\n"


def _plain(x):
    """A typed result (anywhere in the data: {"plans": [Plan, ...]}) as its JSON dump, anything else (a date,
    a path) as its text; plain data as it is."""
    if isinstance(x, BaseModel):
        return x.model_dump(mode="json", exclude_unset=True)
    return x if isinstance(x, (dict, list, tuple, str, int, float, bool, type(None))) else str(x)
