"""Options and helpers shared by the verbs."""

from __future__ import annotations

import typer

from gpuarena.errors import UserError

DbOption = typer.Option(None, "--db", help="SQLite database (default: $GPUARENA_DB or ./gpuarena.db)")


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
