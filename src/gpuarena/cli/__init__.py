"""The command line.  One module per group of verbs; each function parses,
calls the package and prints.  A UserError anywhere becomes one line on stderr
and exit code 2, with nothing written; anything unexpected becomes one line,
exit code 1 and a request to report it (`--debug` shows the traceback)."""

from __future__ import annotations

import sqlite3
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
from gpuarena.cli import bundle_cmds  # noqa: E402,F401
from gpuarena.cli import catalog_cmds  # noqa: E402,F401
from gpuarena.cli import serve_cmds  # noqa: E402,F401
from gpuarena.cli import fleet_cmds  # noqa: E402,F401

def _say(line: str) -> None:
    """One line on stderr: no control characters, a hostile 5,000-character path shortened."""
    import re

    from gpuarena.safeio import printable

    line = re.sub(r"\S{201,}", lambda m: m.group()[:120] + "..." + m.group()[-60:], " ".join(str(line).split()))
    print(printable(line)[:2000], file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    for stream in (sys.stdout, sys.stderr):   # an ASCII terminal shows '?' for 'ü', never a traceback
        if hasattr(stream, "reconfigure") and stream.encoding and not stream.encoding.lower().startswith("utf"):
            stream.reconfigure(errors="replace")
    argv = [a for a in argv if a != "--debug"]
    try:
        try:
            app(args=argv, prog_name="gpuarena", standalone_mode=True)
        finally:
            from gpuarena.cli.common import skipped_warning

            note = skipped_warning()
            if note:
                _say(f"gpuarena: warning: {note}")
    except UserError as exc:
        _say(f"gpuarena: error: {exc}")
        sys.exit(2)
    except (SystemExit, KeyboardInterrupt):
        raise
    except sqlite3.DatabaseError as exc:  # a disk that filled or failed, a file damaged meanwhile
        from gpuarena.cli.common import OPENED
        from gpuarena.store.opening import sqlite_error

        path = OPENED[-1].path if OPENED else "the database"
        _say(f"gpuarena: error: {sqlite_error(path, exc)}")
        sys.exit(2)
    except MemoryError:
        _say("gpuarena: error: out of memory")
        sys.exit(1)
    except Exception as exc:  # the last resort: never a traceback for a user
        if debug:
            raise
        what = f"{exc.__class__.__name__}: {exc}"[:300]
        _say(f"gpuarena: internal error ({what}); this is a bug: please report it with the "
             "traceback that --debug prints")
        sys.exit(1)
