"""Errors a user can cause.  The CLI turns each into one line and exit code 2."""

import difflib
from typing import Iterable


class UserError(Exception):
    """Bad input: an unknown name, a malformed file, an out-of-range value.

    Raised before anything is written, so a refused command changes nothing.
    """


def pydantic_error_line(exc) -> str:
    """A pydantic ValidationError as one line: where, what, and how many more."""
    err = exc.errors()[0]
    where = ".".join(str(x) for x in err.get("loc", ())) or "top level"
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{where}: {err.get('msg')}{more}"


class WorkloadSkipped(Exception):
    """A workload cannot run here for a stated reason (an optional library is missing, the
    hardware lacks a feature such as FP8).  The case is stored as ``skipped`` with the reason:
    never measured on a fallback and never faked."""



def brief(value, limit: int = 60) -> str:
    """A value a user gave, as an error line shows it: its repr, the middle of a long one left out and
    its length said (a 1,000-item list would bury the reason that follows it)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit * 2 // 3]}...{text[-(limit // 4):]} ({len(str(value)):,} characters)"


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest of choices, or '' (the tail of an unknown-name error)."""
    close = difflib.get_close_matches(str(name), list(choices), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""
