"""Options and helpers shared by the verbs."""

from __future__ import annotations

import typer

from gpuarena.errors import UserError

DbOption = typer.Option(None, "--db", metavar="FILE|URL",
                        help="SQLite file or postgresql://user@host/dbname (default: $GPUARENA_DB or ./gpuarena.db)")

# The analysis verbs' shared options (compare, cost, check: analysis_cmds.py; whatif, advise: plan_cmds.py).
FMT = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, md or json")
WORKLOAD = typer.Option(None, "--workload", "-w", metavar="WORKLOAD", help="workload name (see `gpuarena list`)")
PRICES = typer.Option(None, "--prices", metavar="FILE",
                      help="YAML file of price overrides (see data/article_prices.yaml)")
BASIS = typer.Option("cloud", "--price-basis", metavar="BASIS",
                     help="cloud ($ per GPU-hour, on-demand; default) or purchase ($ per GPU): one market per table")

# Stores this command opened: main() reports the rows they skipped as unusable.
OPENED: list = []


def open_store(db: str | None, must_exist: bool = False, readonly: bool = False):
    """The database; readonly for commands that only read (they never change the file)."""
    from gpuarena.store.db import Store, default_path

    path = db or default_path()
    store = Store(path, readonly=True) if readonly else _writable(path, must_exist)
    OPENED.append(store)
    return store


def optional_store(db: str | None, named_must_exist: bool = True):
    """The database if there is one: a --db the user named must exist (check: a typo must not
    silently judge claims without the measurements); the default may be absent."""
    from gpuarena.store.db import default_path, exists

    if db and named_must_exist and not exists(db):
        raise UserError(f"--db {db}: the file does not exist")
    path = db or default_path()
    return open_store(path, readonly=True) if exists(path) else None


def out(text: str) -> None:
    """A rendered table or document, as the renderer ended it (no newline added)."""
    typer.echo(text, nl=False)


def gpu_counts(text: str) -> list[int]:
    """--n 2,4,8: the GPU counts a verb models."""
    try:
        ns = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--n {text!r}: expected a list like 4,8") from None
    if not ns or any(not 1 <= n <= 100_000 for n in ns):
        raise UserError(f"--n {text!r}: give GPU counts between 1 and 100000")
    return ns


def refuse_ignored(context: str, given: dict[str, bool]) -> None:
    """An option the command would not use is refused with the reason, never silently ignored."""
    names = [name for name, present in given.items() if present]
    if names:
        raise UserError(f"{', '.join(names)} {'does' if len(names) == 1 else 'do'} not apply to {context}; "
                        "leave it out")


def _writable(path: str, must_exist: bool):
    from gpuarena.store.db import Store
    from gpuarena.store.opening import check_path

    check_path(path, must_exist)
    return Store(path)


def skipped_warning() -> str | None:
    """One line naming the stored rows that readers skipped, if any."""
    rows = {i: why for s in OPENED for i, why in getattr(s, "skipped", [])}
    if not rows:
        return None
    first = next(iter(rows.items()))
    return (f"skipped {len(rows)} stored result(s) that fail validation (id {first[0]}: {first[1]}); "
            "the other results are shown")


def undeclared_warning(rows) -> str | None:
    """One line naming the results, of (id, workload, keys), that carry figures their workload
    does not declare (its class's ``figures``; a plugin's known when it is installed): they are
    kept as they are, and said so where they enter (import)."""
    from gpuarena.workloads import registry

    found = {}
    for i, workload, keys in rows:
        cls = registry.find(workload)
        keys = [k for k in keys if cls is None or k not in cls.figures.model_fields]
        if keys:
            found[i] = keys
    if not found:
        return None
    first, keys = next(iter(found.items()))
    return (f"{len(found)} result(s) carry figures their workload does not declare (id {first}: "
            f"{', '.join(keys[:3])}); they are kept as they are")


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
