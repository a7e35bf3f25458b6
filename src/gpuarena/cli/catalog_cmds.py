"""Verb: gpus (the catalog every analysis prices and checks against)."""

from __future__ import annotations

import typer

from gpuarena.cli import app
from gpuarena.cli.common import check_format


@app.command()
def gpus(fmt: str = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, json, csv or md")) -> None:
    """The GPU catalog: memory, bandwidth, dense peaks by precision, NVLink, TDP and prices, each with its source."""
    from gpuarena.data.catalog import catalog_rows
    from gpuarena.report.catalog import render

    check_format(fmt, ("table", "json", "csv", "md"))
    typer.echo(render(catalog_rows(), fmt), nl=False)
