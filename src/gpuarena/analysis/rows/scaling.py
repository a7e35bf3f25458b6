"""Scaling efficiency: the articles' "linear coefficient".

efficiency(N) = throughput at N ranks / (N x throughput at 1 rank), both of the
same workload, variant, parameters (per-rank batch) and size.  Article 000
section 4 reports 0.92 (A100) and 0.81 (A800) for 4-GPU ResNet-50 training.
Pure arithmetic over stored results, computed when they are read (analysis/rows/derived.py)
against the 1-rank result of the same run.
"""

from __future__ import annotations

import json

from gpuarena.identity import comparable
from gpuarena.measure import stats
from gpuarena.workloads import registry
from gpuarena.store.result import Result


def efficiency(throughput_n: float, n: int, throughput_1: float) -> float:
    """throughput_n / (n x throughput_1)."""
    if n < 1:
        raise ValueError(f"n={n}: need at least one rank")
    if throughput_1 <= 0:
        raise ValueError("the 1-rank throughput must be positive")
    return throughput_n / (n * throughput_1)


def _throughputs(result: Result) -> list[float]:
    items = result.items_per_step
    return [items / s for s in result.samples or [] if s and items]


def world_size(result: Result) -> int:
    return result.extra.world_size or result.gpus


def scaling_figures(result: Result, baseline: Result) -> dict:
    """Efficiency of an N-rank result against its 1-rank baseline, with a 95% interval."""
    n = world_size(result)
    out = {"scaling_efficiency": efficiency(result.throughput_median, n, baseline.throughput_median),
           "scaling_baseline_id": baseline.id, "scaling_n": n}
    a, b = _throughputs(result), _throughputs(baseline)
    if len(a) > 1 and len(b) > 1:
        _, low, high = stats.ratio_ci95(a, b)
        out["scaling_efficiency_ci95"] = [low / n, high / n]
    return out


def find_baseline(candidates: list[Result], result: Result) -> Result | None:
    """The 1-rank ok result of the same run, workload definition, variant, params and size."""
    for c in reversed(candidates):   # the latest, if a run stored several
        if (c.status == "ok" and world_size(c) == 1 and comparable(c, result)
                and c.run_id == result.run_id
                and c.variant == result.variant and c.params == result.params
                and c.size == result.size and c.throughput_median):
            return c
    return None


def _setting(r: Result) -> tuple:
    return (r.run_id, r.workload, r.variant, r.size,
            json.dumps(r.params, sort_keys=True, default=str))


def baselines(pool: list[Result]) -> dict[tuple, list[Result]]:
    """The 1-rank ok results of pool by run and setting: one pass, so that asking for the
    baseline of every result of a 20,000-row database is not 20,000 passes."""
    out: dict[tuple, list[Result]] = {}
    for c in pool:
        if c.status == "ok" and world_size(c) == 1 and c.throughput_median:
            out.setdefault(_setting(c), []).append(c)
    return out


def figures_for(pool: list[Result], result: Result, index: dict[tuple, list[Result]] | None = None) -> dict:
    """The scaling figures of an N-rank data-parallel result, when its baseline is in ``pool``
    (``index``: baselines(pool), when the caller asks for many results)."""
    if result.status != "ok" or world_size(result) < 2 or not result.throughput_median:
        return {}
    cls = registry.find(result.workload)
    if cls is None or cls.rank_aggregate != "sum":
        return {}   # collectives have bandwidths, not a scaling efficiency
    if index is not None:
        pool = index.get(_setting(result), [])
    base = find_baseline(pool, result)
    return scaling_figures(result, base) if base is not None else {}
