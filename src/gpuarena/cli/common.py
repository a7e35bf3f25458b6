"""Options and helpers shared by the verbs."""

from __future__ import annotations

import typer

from gpuarena.errors import UserError

DbOption = typer.Option(None, "--db", metavar="FILE", help="SQLite database (default: $GPUARENA_DB or ./gpuarena.db)")


def open_store(db: str | None, must_exist: bool = False):
    import os

    from gpuarena.store.db import Store, default_path

    path = db or default_path()
    if must_exist and not os.path.exists(path):
        raise UserError(f"no database at {path} (run `gpuarena run` first, or pass --db)")
    return Store(path)


def check_format(fmt: str, allowed: tuple[str, ...]) -> str:
    if fmt not in allowed:
        raise UserError(f"--format {fmt!r}: choose one of {', '.join(allowed)}")
    return fmt


def resolve_run_ids(store, runs: list[str]) -> list[str]:
    """--run values ('latest' or ids) as run ids; a UserError naming the latest runs if one is unknown."""
    out = []
    for r in runs:
        if r == "latest":
            latest = store.latest_run_id()
            if latest is None:
                raise UserError("the database has no runs")
            out.append(latest)
        else:
            store.run(r)  # raises the UserError
            out.append(r)
    return out
