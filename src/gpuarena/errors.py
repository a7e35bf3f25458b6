"""Errors a user can cause (the CLI turns each into one line and exit code 2), and how a
failed step is classified (out of memory or not), shared by the runner and the workloads."""

import resource
import sys

OOM_MARKERS = ("out of memory", "can't allocate memory", "cannot allocate memory", "CUBLAS_STATUS_ALLOC_FAILED")


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


def is_oom(exc: BaseException) -> bool:
    """Whether an exception means the device (or, capped, the host) ran out of memory."""
    torch = sys.modules.get("torch")   # no torch loaded: no torch allocation failed
    oom_types = (MemoryError,) + tuple(t for t in (getattr(torch, "OutOfMemoryError", None),
                                                   getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)) if t)
    if isinstance(exc, oom_types):
        return True
    if any(m in str(exc) for m in OOM_MARKERS):
        return True
    # Under an address-space cap (GPUARENA_MEMORY_CAP_MB on the CPU) oneDNN reports a failed
    # allocation as a primitive it could not create; without a cap that error means something else.
    capped = resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY
    return capped and "could not create a primitive" in str(exc)
