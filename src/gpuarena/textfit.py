"""Fitting tables to a terminal, in one place below the report in the import layers: the verbs'
tables (report/text/) and the report's console tables both fold wide tables the same way."""

from __future__ import annotations

import functools
import io
import shutil
import textwrap

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


def terminal_width() -> int:
    """$COLUMNS, else the terminal's width, else 80 (a pipe gets what a terminal would)."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def rendered_width(table: Table) -> int:
    """The widest line of table drawn without a width limit (renders every cell: slow for many rows)."""
    buf = io.StringIO()
    Console(file=buf, width=100_000, color_system=None, force_terminal=False).print(table)
    return max((len(line.rstrip()) for line in buf.getvalue().splitlines()), default=0)


_MEASURE = Console(file=io.StringIO(), width=100_000, color_system=None, force_terminal=False)


@functools.lru_cache(maxsize=4096)   # status and flag cells repeat across thousands of rows
def plain(cell: str) -> str:
    """A rich-markup cell as the terminal shows it."""
    return Text.from_markup(cell).plain if "[" in cell else cell


def _cell_width(cell) -> int | None:
    """Terminal columns of a cell's widest line (markup removed), or None for another renderable."""
    if isinstance(cell, str):
        text = plain(cell)
    elif isinstance(cell, Text):
        text = cell.plain
    else:
        return None
    return max((cell_len(line) for line in text.split("\n")), default=0)


def column_widths(headers: list, rows: list[list]) -> list[int | None]:
    """Per column, its widest cell (header included) as drawn; None where a cell is no text."""
    out = []
    for i, h in enumerate(headers):
        cells = [_cell_width(c) for c in (h, *(row[i] for row in rows))]
        out.append(None if None in cells else max(cells))
    return out


def natural_width(table: Table, widths: list[int] | None = None) -> int:
    """The width table takes unfolded, without drawing its rows: each column's widest cell
    (``widths``, when the caller measured them already), plus what the table's box and padding
    add (measured once on a one-row table of the same style).  One pass over the cells at
    most, so fitting a 20,000-row table to a terminal costs no render."""
    if any(col.width or col.min_width or col.max_width or col.ratio for col in table.columns):
        return rendered_width(table)
    if widths is None:
        widths = column_widths([c.header for c in table.columns],
                               [list(r) for r in zip(*(c._cells for c in table.columns))])
        if None in widths:
            return rendered_width(table)
    probe = Table(box=table.box, padding=table.padding, show_edge=table.show_edge, pad_edge=table.pad_edge,
                  collapse_padding=table.collapse_padding, show_header=table.show_header)
    for _ in table.columns:
        probe.add_column("x")
    probe.add_row(*("x" for _ in table.columns))
    extra = sum(widths) - len(table.columns)
    body = rendered_width(probe) + extra          # as drawn, trailing padding stripped
    full = Measurement.get(_MEASURE, _MEASURE.options, probe).maximum + extra   # what a title wraps to
    title = _cell_width(table.title) if isinstance(table.title, (str, Text)) else 0
    return max(body, min(title or 0, full))


LONG_TABLE = 1000   # rows above which a table is drawn as plain text (rich takes ~1 ms a row)


def draw(title: str | None, headers: list[str], justify: list[str], rows: list[list[str]],
         widths: list[int], ascii_only: bool = False) -> Text:
    """A long table as plain text in rich's default look (heavy head, light body, one space of
    padding; rich's ASCII box where the terminal takes only ASCII), drawn in one pass: the
    lines rich would print in a pipe, without its cost."""
    b = box.ASCII if ascii_only else box.HEAVY_HEAD

    def rule(left, fill, cross, right):
        return left + cross.join(fill * (w + 2) for w in widths) + right

    def line(cells, left, bar, right):
        return left + bar.join(f" {_pad(c, w, j)} " for c, w, j in zip(cells, widths, justify)) + right

    out = [rule(b.top_left, b.top, b.top_divider, b.top_right),
           line(headers, b.head_left, b.head_vertical, b.head_right),
           rule(b.head_row_left, b.head_row_horizontal, b.head_row_cross, b.head_row_right)]
    out += [line(cells, b.mid_left, b.mid_vertical, b.mid_right) for cells in rows]
    out.append(rule(b.bottom_left, b.bottom, b.bottom_divider, b.bottom_right))
    if title:
        buf = io.StringIO()
        Console(file=buf, width=len(out[0]), color_system=None, force_terminal=False).print(
            title, justify="center", markup=False, highlight=False, emoji=False)
        out = [ln.rstrip() for ln in buf.getvalue().splitlines()] + out
    return Text("\n".join(out))


def _pad(cell: str, width: int, justify: str) -> str:
    gap = " " * (width - cell_len(cell))
    return gap + cell if justify == "right" else cell + gap


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
