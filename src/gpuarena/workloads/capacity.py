"""The general capacity search: the largest concurrency (batch) that fits in memory.

Used by sd15-generate ("maximum concurrent generations") and llm-serve (the
largest batch of concurrent sequences).  A try is one real call of the
workload's unit of work at that batch; an out-of-memory error is an answer
(no), anything else is an error.  The search runs inside the case's own fresh
process, which the runner starts and ends: a try that dies instead of raising
(the OOM killer on a host) ends that process, and the runner stores the case as
``oom`` or ``crashed`` from its stderr.  After a failed try the allocator's
cache is emptied, so the next try starts from the same free memory (the tries
are ordered so that memory never has to be reclaimed from a larger one that
succeeded: doubling, then bisecting below the first failure).
"""

from __future__ import annotations

import gc
import resource
from typing import Callable

OOM_MARKERS = ("out of memory", "can't allocate memory", "cannot allocate memory", "CUBLAS_STATUS_ALLOC_FAILED")


def is_oom(exc: BaseException) -> bool:
    import torch

    oom_types = tuple(t for t in (getattr(torch, "OutOfMemoryError", None),
                                  getattr(torch.cuda, "OutOfMemoryError", None), MemoryError) if t)
    if isinstance(exc, oom_types):
        return True
    if any(m in str(exc) for m in OOM_MARKERS):
        return True
    # Under an address-space cap (GPUARENA_MEMORY_CAP_MB on the CPU) oneDNN reports a failed
    # allocation as a primitive it could not create; without a cap that error means something else.
    capped = resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY
    return capped and "could not create a primitive" in str(exc)


def find_max(fits: Callable[[int], bool], cap: int, start: int = 1) -> tuple[int, list[dict], bool]:
    """Largest b in [start, cap] with fits(b), assuming fits is monotone: double, then bisect.

    Returns (best, tries, capped); best is 0 when even ``start`` does not fit and
    capped is True when ``cap`` itself fit (the real limit may lie higher).
    """
    tries: list[dict] = []

    def probe(b: int) -> bool:
        ok = bool(fits(b))
        tries.append({"batch": b, "fits": ok})
        return ok

    lo, hi, b = 0, None, start
    while True:
        if probe(b):
            lo = b
            if b >= cap:
                return lo, tries, True
            b = min(2 * b, cap)
        else:
            hi = b
            break
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if probe(mid):
            lo = mid
        else:
            hi = mid
    return lo, tries, False


def fits_in_memory(call: Callable[[], object], device) -> tuple[bool, int | None]:
    """Run ``call`` once: (True, peak bytes allocated on a GPU, else None) if it completes,
    (False, None) if it runs out of memory.  Any other error propagates."""
    import torch

    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    try:
        call()
        ok = True
    except Exception as exc:  # noqa: BLE001 - only OOM is swallowed
        if not is_oom(exc):
            raise
        ok = False
    finally:
        gc.collect()
        if cuda:
            torch.cuda.synchronize(device)
            torch.cuda.empty_cache()
    return ok, (torch.cuda.max_memory_allocated(device) if ok and cuda else None)


def search_max_batch(call: Callable[[int], object], device, cap: int) -> dict:
    """The search as stored in a result's extra: max_batch, tries (with peak memory where
    measured) and capped.  ``call(b)`` runs the unit of work at batch b."""
    peaks: dict[int, int | None] = {}

    def fits(b: int) -> bool:
        ok, peaks[b] = fits_in_memory(lambda: call(b), device)
        return ok

    best, tries, capped = find_max(fits, cap)
    for t in tries:
        if peaks.get(t["batch"]) is not None:
            t["peak_memory_bytes"] = peaks[t["batch"]]
    if device.type == "cuda":
        import torch

        torch.cuda.reset_peak_memory_stats(device)  # the case's peak then reflects the timed batch
    return {"max_batch": best, "tries": tries, "capped": capped}
