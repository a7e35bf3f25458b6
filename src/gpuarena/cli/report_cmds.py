"""Verb: report (one self-contained HTML file, or Markdown)."""

from __future__ import annotations

import os
from typing import Optional

import typer

from gpuarena.cli.common import DbOption, check_format, open_store
from gpuarena.errors import UserError

app = typer.Typer()   # this module's verbs; cli/app.py puts them on the root, at the top level


@app.command()
def report(
    db: Optional[str] = DbOption,
    run: list[str] = typer.Option([], "--run", metavar="RUN_ID",
                                  help="run id (repeatable); default: all runs; 'latest' for the newest"),
    baseline: Optional[str] = typer.Option(None, "--baseline", "-b", metavar="GPU",
                                           help="GPU the comparison divides by"),
    case: Optional[int] = typer.Option(None, "--case", metavar="RESULT_ID",
                                       help="result id whose telemetry is charted "
                                            "(default: the longest ok case with telemetry)"),
    out: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE",
                                      help="file to write (default report.html or report.md)"),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", metavar="FORMAT",
                                      help="html or md (default: from -o's suffix, else html)"),
) -> None:
    """Write the report: what ran where, throughput, tuning, telemetry, scaling, comparison."""
    from gpuarena.report.html import write_report

    if fmt is None:
        fmt = "md" if out and out.lower().endswith((".md", ".markdown")) else "html"
    check_format(fmt, ("html", "md"))
    out = out or f"report.{fmt}"
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise UserError(f"-o {out}: folder {folder} does not exist")
    store = open_store(db, readonly=True)
    run_ids = []
    for r in run:
        if r == "latest":
            latest = store.latest_run_id()
            if latest is None:
                raise UserError("the database has no runs")
            run_ids.append(latest)
        else:
            store.run(r)  # a UserError naming the latest runs if unknown
            run_ids.append(r)
    path = write_report(store, out, run_ids or None, baseline=baseline, case_id=case, fmt=fmt)
    print(os.path.abspath(path))
