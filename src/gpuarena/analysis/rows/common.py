"""Helpers over typed stored results (store/result.py) shared by the analyses."""

from __future__ import annotations

import json
import math
import re

from gpuarena.data import catalog
from gpuarena.store.flags import diverged, FlagKind
from gpuarena.store.result import Result


def gpu_of(r: Result) -> str:
    """GPU identity of a result: the catalog name where the device name matches one row."""
    return catalog.identity(r.device_name)


def natural_key(text) -> tuple:
    """'batch_size=8' before 'batch_size=64': digits compare as numbers."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", str(text)) if p)


def is_search(r: Result) -> bool:
    """A maximum-batch search result (SD v1.5 search=max-batch): timed at fewer denoising steps and
    another batch, it answers "how many fit", so it never stands for the workload's speed."""
    return r.params.get("search", "none") not in (None, "none")


def known_workload(store, workload: str | None) -> None:
    """A UserError with "did you mean" for a workload that is neither registered nor stored."""
    if workload is None:
        return
    from gpuarena.errors import UserError, did_you_mean
    from gpuarena.workloads.registry import REGISTRY

    stored = {r.workload for r in store.results()}
    known = sorted(set(REGISTRY) | stored)
    if workload not in known:
        raise UserError(f"unknown workload {workload!r}{did_you_mean(workload, known)}; "
                        f"known: {', '.join(known)} (`gpuarena list` describes them)")


def baseline_gpu(results: list[Result], baseline: str) -> str:
    """The catalog name of a loosely written baseline; one ambiguous in the catalog is
    resolved by the GPUs that have results, else a UserError lists the matches."""
    from gpuarena.errors import UserError

    c = catalog.candidates(baseline)
    if len(c) <= 1:
        return c[0].name if c else baseline
    have = {gpu_of(r) for r in results}
    stored = [g for g in c if g.name in have]
    if len(stored) == 1:
        return stored[0].name
    raise UserError(f"GPU {baseline!r} is ambiguous: it matches {', '.join(g.name for g in (stored or c))}; "
                    "add memory size or SXM/PCIe (`gpuarena gpus` lists the catalog)")


def params_text(params: dict | None) -> str:
    return json.dumps(params or {}, sort_keys=True)


def ratio_text(x: float) -> str:
    """A ratio as "1.23x"; one more digit where two would print a real difference as 1.00x."""
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:.3f}x" if f"{x:.2f}" == "1.00" and f"{x:.3f}" != "1.000" else f"{x:.2f}x"


def per_repeat_throughput(r: Result) -> list[float]:
    """The independent throughput samples of a result, for ratio intervals: items_per_step /
    seconds-per-step, one value per timed repeat, or, measured in several fresh processes
    (runner/pool.py), one mean per process.  Empty for published rows."""
    procs = r.extra.processes or []
    if len(procs) > 1:
        return [p.throughput_mean for p in procs if p.throughput_mean]
    if not r.items_per_step:
        return []
    return [r.items_per_step / s for s in r.samples or []]


def flags(r: Result, brief: bool = False) -> list[str]:
    """Why a figure deserves caution (store/flags.py's typed flags, in words): throttling,
    spread, NaN, processes that disagree (runner/pool.py), other stored warnings.  brief: the
    report's one-word form ("noisy" for a high CV; other warnings are listed apart there)."""
    shown = (FlagKind.throttled, FlagKind.noisy, FlagKind.nan, FlagKind.processes)
    out = [f.word if brief or f.kind is not FlagKind.noisy else f.message for f in r.flags if f.kind in shown]
    other = sum(f.kind not in shown for f in r.flags)
    if other and not brief:
        out.append(f"{other} warning(s)")
    return out


def finite(results: list[Result]) -> list[Result]:
    """The results whose computation stayed finite: the only ones a cost or a record may stand on (an
    H200 ResNet-50 CUDA-graph rung stored 28,634 images/s with non-finite outputs, session 8)."""
    return [r for r in results if not diverged(r)]


def finite_first(results: list[Result]) -> list[Result]:
    """The results whose computation stayed finite, or all of them if none did.

    A diverged run is not a fair speed record: on an H200 ResNet-50 trained into NaNs
    drew 557 W at full clock where the same recipe on finite numbers sat at the 700 W cap
    (BENCHMARKS.md), so "best" is taken among finite results wherever there are some.
    """
    return finite(results) or results


def latest(results: list[Result]) -> list[Result]:
    """The newest result per (GPU, source, workload, variant, params, size, gpus); every published row
    is its own (two sources, or two systems of one source, for one GPU stand side by side)."""
    best: dict[tuple, Result] = {}
    for r in results:
        k = (gpu_of(r), r.source, r.workload, r.variant, params_text(r.params), r.size, r.gpus,
             r.case_key if r.source == "published" else None)   # published rows never replace each other
        if k not in best or r.id > best[k].id:
            best[k] = r
    return list(best.values())


def group_by(items, key) -> dict:
    """{key(x): [x, ...]} in the items' order, keys in order of first appearance: one pass, where a
    filter of every item per key is quadratic in the keys."""
    out: dict = {}
    for x in items:
        out.setdefault(key(x), []).append(x)
    return out


def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def fmt_params(params: dict | None) -> str:
    """Compact, stable text of a params dict (sorted keys)."""
    return " ".join(f"{k}={v}" for k, v in sorted((params or {}).items()))


def message_bytes(r: Result) -> float | None:
    """A collective result's message size: extra.size_bytes, else params.size_mb in MiB."""
    if r.extra.size_bytes:
        return float(r.extra.size_bytes)
    mb = r.params.get("size_mb")
    return float(mb) * 2**20 if isinstance(mb, (int, float)) and mb > 0 else None

