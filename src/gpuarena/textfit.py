"""Fitting tables to a terminal, in one place below analysis and report in the import layers:
analysis' table renderers and the report's console tables both fold wide tables the same way."""

from __future__ import annotations

import io
import shutil
import textwrap

from rich.console import Console
from rich.table import Table


def terminal_width() -> int:
    """$COLUMNS, else the terminal's width, else 80 (a pipe gets what a terminal would)."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def natural_width(table: Table) -> int:
    buf = io.StringIO()
    Console(file=buf, width=100_000, color_system=None, force_terminal=False).print(table)
    return max((len(line.rstrip()) for line in buf.getvalue().splitlines()), default=0)


NBSP = "\u00a0"


def _glue(text: str) -> str:
    return text.replace(" ", NBSP)


def records(headers: list[str], rows: list[list[str]], width: int) -> list[str]:
    """A table too wide for the terminal, folded: one block per row, the first
    column as its heading, then "header value" pairs wrapped to the width.
    Empty cells ("-") are left out."""
    out = []
    for cells in rows:
        out.append(textwrap.shorten(cells[0], width, placeholder="...") if len(cells[0]) > width else cells[0])
        # a header stays with its value (and a short value whole): no-break spaces while wrapping
        pairs = [_glue(h) + NBSP + (_glue(c) if len(c) <= 24 else c)
                 for h, c in zip(headers[1:], cells[1:]) if c not in ("-", "")]
        out += [line.replace(NBSP, " ") for line in textwrap.wrap(
            " · ".join(pairs), width, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False)]
    return out
