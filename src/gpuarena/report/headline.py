"""Each workload's headline figure in its article's unit: items/s for most,
seconds per item for SD v1.5 (the articles quote s/image).  The workload class
declares which (`Workload.headline`); the report's tables, tiles and cost rows
all ask here.  A maximum-concurrency search result answers another question
(the largest batch that fits, timed at fewer denoising steps), so it never
stands for the workload's headline."""

from __future__ import annotations

import functools

from gpuarena.analysis.rows.common import is_search  # one definition, shared with cost and advise
from gpuarena.numbers import fmt_num
from gpuarena.store.result import Result

LATENCY = "latency_s_per_item"


@functools.lru_cache(maxsize=64)
def kind(workload: str) -> str:
    from gpuarena.errors import UserError
    from gpuarena.workloads import registry

    try:
        return registry.get(workload).headline
    except UserError:          # an imported workload this version does not know
        return "throughput"


@functools.lru_cache(maxsize=64)
def item(workload: str) -> str:
    from gpuarena.errors import UserError
    from gpuarena.workloads import registry

    try:
        return registry.get(workload).item
    except UserError:
        return "item"


def is_latency(workload: str) -> bool:
    return kind(workload) == LATENCY




def unit(workload: str, throughput_unit: str | None) -> str:
    return f"s/{item(workload)}" if is_latency(workload) else (throughput_unit or "items/s")


def value(r: Result) -> float | None:
    """The headline figure of one result (None where it has none: a search result of a latency workload)."""
    thr = r.throughput_median or (r.throughput.median if r.throughput is not None else None)
    if not thr:
        return None
    if is_latency(r.workload):
        return None if is_search(r) else 1.0 / thr
    return thr


def interval(r: Result) -> tuple[float | None, float | None]:
    """The 95% interval of the headline figure; for seconds per item, the reciprocal of the
    throughput interval (exact: the interval is computed on the log scale)."""
    thr = r.throughput
    if thr is None or thr.ci95_low is None or thr.ci95_high is None or thr.n < 2:
        return None, None
    lo, hi = thr.ci95_low, thr.ci95_high
    if is_latency(r.workload):
        if is_search(r) or lo <= 0:
            return None, None
        return 1.0 / hi, 1.0 / lo
    return lo, hi


def better(workload: str) -> str:
    """'min' when a smaller headline figure is better."""
    return "min" if is_latency(workload) else "max"


def text(r: Result) -> str:
    v = value(r)
    return f"{fmt_num(v)} {unit(r.workload, r.unit)}" if v is not None else "-"


def max_batch_text(r: Result) -> str:
    """What a maximum-concurrency search found: the batch, or '>= cap (the cap)' when every batch fitted."""
    if not is_search(r) or r.extra.max_batch is None:
        return "-"
    if r.extra.capped:
        return f">= {r.params.get('search_max', r.extra.max_batch)} (the cap)"
    return str(r.extra.max_batch)
