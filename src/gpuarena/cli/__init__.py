"""The command line.  One module per group of verbs; each function parses,
calls the package and prints.  A UserError anywhere becomes one line on stderr
and exit code 2, with nothing written."""

from __future__ import annotations

import sys

import typer

from gpuarena.errors import UserError

app = typer.Typer(
    name="gpuarena",
    help="How fast is a GPU really on your PyTorch work, and which one to choose.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's plain help: option values by their metavar (GPU, FILE), not Python types
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from gpuarena import __version__

        typer.echo(f"gpuarena {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="print the version and exit")) -> None:
    """How fast is a GPU really on your PyTorch work, and which one to choose."""

# Each module registers its verbs on `app` when imported.
from gpuarena.cli import run_cmds  # noqa: E402,F401
from gpuarena.cli import report_cmds  # noqa: E402,F401
from gpuarena.cli import analysis_cmds  # noqa: E402,F401
from gpuarena.cli import catalog_cmds  # noqa: E402,F401


def main(argv: list[str] | None = None) -> None:
    try:
        app(args=argv, prog_name="gpuarena", standalone_mode=True)
    except UserError as exc:
        print(f"gpuarena: error: {exc}", file=sys.stderr)
        sys.exit(2)
