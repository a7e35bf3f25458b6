"""The report as one self-contained HTML file: inline CSS, static SVG charts, no network.

Jinja2 renders it with autoescaping on, so every string from a result, an
import or a user is escaped; the only markup let through unescaped is the SVG
that matplotlib wrote (which escapes its own text).
"""

from __future__ import annotations

import os
import re
from importlib.metadata import PackageNotFoundError, version

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from gpuarena.report.build import gather
from gpuarena.report.model import Report, Section

REPORTS_DIR = "reports"   # beside the database: ./gpuarena.db -> ./reports/<run id>.html


def _version() -> str:
    try:
        return version("gpuarena")
    except PackageNotFoundError:
        return "dev"


# "amp-bf16+channels-last": a composed variant may break after its '+' (not "+00:00" in a time)
_PLUS = re.compile(r"(?<=[A-Za-z0-9])\+(?=[A-Za-z])")


def _breakable(text) -> Markup:
    return Markup(_PLUS.sub("+<wbr>", str(escape(text))))


_REF = re.compile(r"\[(\d{1,3})\]")
_CODE = re.compile(r"`([^`<>]+)`")        # a command to run, as the text quotes it
_URL = re.compile(r"(https?://[^\s<>\"']+?)(?=[.,;:)]?(?:\s|$|&lt;))")


def _refs(text) -> Markup:
    """Escaped text whose footnote marks [n] link to the numbered sources at the end."""
    marked = _REF.sub(r'<a class="fn" href="#fn-\1">[\1]</a>', str(escape(text)))
    return Markup(_CODE.sub(r"<code>\1</code>", marked))


def _linked(text) -> Markup:
    """A footnote's text with its addresses as links."""
    return Markup(_URL.sub(r'<a href="\1">\1</a>', str(escape(text))))


def layout(t) -> dict:
    """A table as the page shows it: the main columns, and per row the secondary cells (the
    table's `details`) that go into a full-width row beneath it, so the main row stays short."""
    main = [i for i, (h, _) in enumerate(t.columns) if h not in t.details]
    more = [i for i, (h, _) in enumerate(t.columns) if h in t.details]
    rows = [([(row[i], t.columns[i][0], t.columns[i][1]) for i in main],
             [(t.columns[i][0], row[i]) for i in more if row[i] not in ("", "-")]) for row in t.rows]
    return {"columns": [t.columns[i] for i in main], "rows": rows}


def _env() -> Environment:
    env = Environment(loader=PackageLoader("gpuarena.report", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["breakable"] = _breakable
    env.filters["refs"] = _refs
    env.filters["linked"] = _linked
    env.globals["layout"] = layout
    env.tests["composed"] = lambda text: bool(_PLUS.search(str(text)))
    return env


def _all_charts(sections: list[Section]):
    for s in sections:
        yield from s.charts
        yield from _all_charts(s.subsections)


def render(report: Report, db: str = "") -> str:
    svgs, wanted = {}, list(_all_charts(report.sections))
    if wanted:   # matplotlib's import (0.9 CPU s) only for a report that draws: a run's report often does not
        from gpuarena.report import charts

        for c in wanted:
            svgs[c.id] = Markup(getattr(charts, c.kind)(c.id, **c.args))
    return _env().get_template("report.html.j2").render(report=report, svgs=svgs, version=_version(), db=db)


def write_report(store, out: str, run_ids: list[str] | None = None, baseline: str | None = None,
                 case_id: int | None = None, fmt: str = "html") -> str:
    """Gather, render and write; returns the path written.  Nothing is written on a bad input."""
    report = gather(store, run_ids, baseline=baseline, case_id=case_id)
    if fmt == "md":
        from gpuarena.report.markdown import render as render_md

        text = render_md(report)
    else:
        text = render(report, db=store.name)
    from gpuarena.safeio import write_text

    return write_text(out, text, "-o", protect=(store.path,))


def after_run(store, run_id: str, console) -> None:
    """Called by `gpuarena run` when a run ends: writes reports/<run_id>.html in the database's
    folder (a report lives with the results it shows) and prints its path."""
    from gpuarena.errors import UserError

    path = os.path.join(store.folder, REPORTS_DIR, f"{run_id}.html")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_report(store, path, [run_id])
    except UserError as exc:  # e.g. a run with no results: say why, the run itself succeeded
        console.print(f"no report: {exc}", markup=False)
        return
    # one unwrapped line, whatever the terminal's width: a path to copy (and to parse)
    console.print(f"report: {os.path.abspath(path)}", soft_wrap=True, markup=False, highlight=False)
