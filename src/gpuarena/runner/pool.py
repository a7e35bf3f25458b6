"""One result from a case measured in several fresh processes (``--processes N``).

Repeats within one process share its state: where its threads landed, what the
allocator and the compiler cache hold, the clocks it started at.  A launch-bound
workload (SD v1.5 at batch 1 in eager mode on an H200, BENCHMARKS.md) measured
the same code 1.48 and 1.29 s per image in two processes, each interval tight:
the repeats did not see the spread between processes.  Measured in N processes,
a case keeps every window as a sample, but its interval is the t-interval of
the N process means (what a new process would give), and ratios against it take
the process means as their samples (analysis.rows.per_repeat_throughput).
Power, energy and clocks are averaged over the processes; the telemetry time
series and compile time are the first process's (later ones may find the
compiler's cache warm; each process's first step is kept in extra.processes).
"""

from __future__ import annotations

import statistics

from gpuarena.measure import stats
from gpuarena.measure.energy import combined_source

def _mean_or_none(xs):
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def _max_or_none(xs):
    xs = [x for x in xs if x is not None]
    return max(xs) if xs else None


def merge(results: list[dict]) -> dict:
    """Pool the per-process results of one case; a process that did not end ok decides the result."""
    if len(results) == 1:
        return results[0]
    n = len(results)
    for i, r in enumerate(results):
        if r.get("status") != "ok":
            return {**r, "error": f"process {i + 1} of {n}: {r.get('error') or r.get('status')}"}
    first = results[0]
    items = first["items_per_step"]
    unit = (first.get("throughput") or {}).get("unit", "")
    per_process = [[items / s for s in r["samples"]] for r in results]
    means = [statistics.fmean(xs) for xs in per_process]
    pooled = stats.summarize([x for xs in per_process for x in xs], unit=unit)
    between = stats.summarize(means, unit=unit)
    throughput = {**pooled.to_dict(), "ci95_low": between.ci95_low, "ci95_high": between.ci95_high}
    windows = [s for r in results for s in r["samples"]]
    lat_pooled = stats.summarize(windows, unit="s/step")
    lat_between = stats.summarize([statistics.fmean(r["samples"]) for r in results], unit="s/step")
    latency = {**lat_pooled.to_dict(), "ci95_low": lat_between.ci95_low, "ci95_high": lat_between.ci95_high}

    # The self-checks measure_case derived from each process's own windows give way to
    # those of the pooled windows; every other warning is kept once.
    own = [stats.summarize(xs) for xs in per_process]
    stale = {w for s in own for w in stats.warnings_for(s)}
    warnings = []
    for w in (w for r in results for w in r.get("warnings") or []):
        if w not in stale and w not in warnings:
            warnings.append(w)
    warnings += stats.warnings_for(pooled)
    # Each process's own 95% interval of its mean; if no value lies in all of them, the
    # processes disagree by more than their repeats explain.
    lows = [s.ci95_low for s in own if s.n > 1]
    highs = [s.ci95_high for s in own if s.n > 1]
    disagree = len(lows) > 1 and max(lows) > min(highs)
    if disagree:
        warnings.append(f"process-dependent: the {n} processes' intervals do not overlap (means "
                        f"{min(means):.4g}-{max(means):.4g} {unit}); the interval is over process means")

    fpi = first.get("flops_per_item")
    out = {**first, "samples": windows, "throughput": throughput, "throughput_median": pooled.median,
           "latency": latency, "tflops": pooled.median * fpi / 1e12 if fpi else None, "warnings": warnings,
           "power_w_mean": _mean_or_none([r.get("power_w_mean") for r in results]),
           "power_w_max": _max_or_none([r.get("power_w_max") for r in results]),
           "energy_j_per_item": _mean_or_none([r.get("energy_j_per_item") for r in results]),
           "energy_source": combined_source(r.get("energy_source") for r in results),
           "temp_c_max": _max_or_none([r.get("temp_c_max") for r in results]),
           "sm_clock_mhz_mean": _mean_or_none([r.get("sm_clock_mhz_mean") for r in results]),
           "throttled": any(r.get("throttled") for r in results),
           "peak_memory_bytes": _max_or_none([r.get("peak_memory_bytes") for r in results])}
    out["extra"] = {**(first.get("extra") or {}),
                    "processes": [{"throughput_mean": m, "repeats": len(xs),
                                   "first_step_s": (r.get("extra") or {}).get("first_step_s"),
                                   "power_w_mean": r.get("power_w_mean")}
                                  for m, xs, r in zip(means, per_process, results)],
                    "process_means_cv": between.cv,
                    "processes_disagree": disagree}
    if any((r.get("extra") or {}).get("nan") for r in results):
        out["extra"]["nan"] = True
    return out
