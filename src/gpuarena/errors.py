"""Errors a user can cause.  The CLI turns each into one line and exit code 2."""


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
