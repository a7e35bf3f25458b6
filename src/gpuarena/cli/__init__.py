"""The command line.  One module per group of verbs, each its own typer.Typer(), joined at the
top level in cli/app.py; each function parses, calls the package and prints.  A UserError anywhere
becomes one line on stderr and exit code 2, with nothing written; anything unexpected becomes one
line, exit code 1 and a request to report it (`--debug` shows the traceback)."""

from __future__ import annotations

import sqlite3
import sys

from gpuarena.cli.app import app
from gpuarena.errors import UserError


def _say(line: str) -> None:
    """One line on stderr: no password (of any URL form, nor one the command was given), no control
    characters, a hostile 5,000-character path shortened."""
    import os
    import re

    from gpuarena.redact import passwords, redact
    from gpuarena.safeio import printable

    given = [*sys.argv[1:], os.environ.get("GPUARENA_DB") or ""]
    line = redact(str(line), [p for a in given for p in passwords(a)])
    line = re.sub(r"\S{201,}", lambda m: m.group()[:120] + "..." + m.group()[-60:], " ".join(str(line).split()))
    line = printable(line)
    if len(line) > 2000:   # the middle left out, not the end: a reason that follows a long value stays
        line = line[:1400] + " ... " + line[-500:]
    print(line, file=sys.stderr)


def _app(argv: list[str]) -> None:
    """The app, with click's own refusals (a word where a number goes, an unknown option or command, a
    missing value) said in one line like ours, exit code 2; help, --version and typer.Exit as before.
    click's classes are known by name: typer >= 0.2x carries its own copy of click."""
    try:
        code = app(args=argv, prog_name="gpuarena", standalone_mode=False)
    except Exception as exc:
        kinds = {c.__name__ for c in type(exc).__mro__}
        if "NoArgsIsHelpError" in kinds:          # no arguments at all: the help, as before
            exc.show()
            sys.exit(exc.exit_code)
        if "UsageError" in kinds:
            where = exc.ctx.command_path if getattr(exc, "ctx", None) else "gpuarena"
            _say(f"gpuarena: error: {exc.format_message()} (`{where} -h` for help)")
            sys.exit(2)
        if "ClickException" in kinds:
            _say(f"gpuarena: error: {exc.format_message()}")
            sys.exit(exc.exit_code)
        if "Abort" in kinds:                      # Ctrl-C or end of input inside click
            _say("Aborted!")
            sys.exit(1)
        raise
    sys.exit(code if isinstance(code, int) else 0)   # typer.Exit(n) comes back as n; done: 0, as click's own


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    for stream in (sys.stdout, sys.stderr):   # an ASCII terminal shows '?' for 'ü', never a traceback
        if hasattr(stream, "reconfigure") and stream.encoding and not stream.encoding.lower().startswith("utf"):
            stream.reconfigure(errors="replace")
    argv = [a for a in argv if a != "--debug"]
    try:
        try:
            _app(argv)
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
