"""The root command, `gpuarena`: its --version and -h, and every module's verbs at the top level
(`gpuarena run`, `gpuarena check`, ...).  Each *_cmds module owns a typer.Typer() of its verbs and knows
nothing of this one; this module joins them, and cli/__init__.py runs the result."""

from __future__ import annotations

import typer

from gpuarena.cli.analysis_cmds import app as analysis_verbs
from gpuarena.cli.bundle_cmds import app as bundle_verbs
from gpuarena.cli.catalog_cmds import app as catalog_verbs
from gpuarena.cli.fleet_cmds import app as fleet_verbs
from gpuarena.cli.plan_cmds import app as plan_verbs
from gpuarena.cli.report_cmds import app as report_verbs
from gpuarena.cli.run_cmds import app as run_verbs
from gpuarena.cli.serve_cmds import app as serve_verbs

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


# The groups in the order `gpuarena -h` lists their verbs.  Their commands go on the root itself, so each
# verb stays top-level with the root's help settings; add_typer(group) without a name would do the same,
# but only from Typer 0.15 on (pyproject allows 0.12, where a nameless group's verbs would vanish).
for _group in (run_verbs, report_verbs, analysis_verbs, plan_verbs, bundle_verbs, catalog_verbs, serve_verbs,
               fleet_verbs):
    app.registered_commands.extend(_group.registered_commands)
