"""Verb: gpus (the catalog every analysis prices and checks against)."""

from __future__ import annotations

import typer

from gpuarena.cli.common import check_format
from gpuarena.errors import UserError

app = typer.Typer()   # this module's verbs; cli/app.py puts them on the root, at the top level


@app.command()
def gpus(fmt: str = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, json, csv or md"),
         basis: str = typer.Option("cloud", "--price-basis", metavar="BASIS",
                                   help="prices shown: cloud ($ per GPU-hour; default) or purchase "
                                        "($ per GPU)")) -> None:
    """The GPU catalog: memory, bandwidth, dense peaks by precision, NVLink, TDP and prices, each with its
    source."""
    from gpuarena.data.prices import check_basis
    from gpuarena.report.catalog import catalog_rows, render

    check_format(fmt, ("table", "json", "csv", "md"))
    check_basis(basis)
    if basis != "cloud" and fmt in ("json", "csv"):
        raise UserError("--price-basis: json and csv carry every price with its market; use it with table or md")
    typer.echo(render(catalog_rows(), fmt, basis), nl=False)
