"""Helpers over stored result dicts shared by the analyses."""

from __future__ import annotations

import json
import math

from gpuarena.data import catalog

CV_FLAG = 0.05   # measure.stats.CV_WARN: a spread above 5% is flagged


def gpu_of(r: dict) -> str:
    """GPU identity of a result: the catalog name where the device name matches one row."""
    return catalog.identity(r.get("device_name"))


def is_search(r: dict) -> bool:
    """A maximum-batch search result (SD v1.5 search=max-batch): timed at fewer denoising steps and
    another batch, it answers "how many fit", so it never stands for the workload's speed."""
    return (r.get("params") or {}).get("search", "none") not in (None, "none")


def known_workload(store, workload: str | None) -> None:
    """A UserError with "did you mean" for a workload that is neither registered nor stored."""
    if workload is None:
        return
    from gpuarena.errors import UserError, did_you_mean
    from gpuarena.workloads.registry import REGISTRY

    stored = {r["workload"] for r in store.results()}
    known = sorted(set(REGISTRY) | stored)
    if workload not in known:
        raise UserError(f"unknown workload {workload!r}{did_you_mean(workload, known)}; "
                        f"known: {', '.join(known)} (`gpuarena list` describes them)")


def baseline_gpu(results: list[dict], baseline: str) -> str:
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


def per_repeat_throughput(r: dict) -> list[float]:
    """The independent throughput samples of a result, for ratio intervals: items_per_step /
    seconds-per-step, one value per timed repeat, or, measured in several fresh processes
    (runner/pool.py), one mean per process.  Empty for published rows."""
    procs = (r.get("extra") or {}).get("processes")
    if isinstance(procs, list) and len(procs) > 1:
        means = [p.get("throughput_mean") for p in procs if isinstance(p, dict)]
        return [m for m in means if isinstance(m, (int, float)) and math.isfinite(m) and m > 0]
    items = r.get("items_per_step")
    xs = r.get("samples") or []
    if not items or not isinstance(xs, list):
        return []
    return [items / s for s in xs if isinstance(s, (int, float)) and math.isfinite(s) and s > 0]


def flags(r: dict, brief: bool = False) -> list[str]:
    """Why a figure deserves caution: throttling, spread, NaN, processes that disagree
    (runner/pool.py), other stored warnings.  brief: the report's one-word form ("noisy"
    for a high CV; other warnings are listed apart there, so not counted)."""
    out = []
    if r.get("throttled"):
        out.append("throttled")
    cv = (r.get("throughput") or {}).get("cv")
    if isinstance(cv, (int, float)) and cv > CV_FLAG:
        out.append("noisy" if brief else f"CV {cv:.1%}")
    extra = r.get("extra") or {}
    if extra.get("nan"):
        out.append("NaN")
    if extra.get("processes_disagree"):
        out.append("process-dependent")
    other = [w for w in r.get("warnings") or []
             if not any(m in w for m in ("throttled", "spread", "NaN", "process-dependent"))]
    if other and not brief:
        out.append(f"{len(other)} warning(s)")
    return out


def finite_first(results: list[dict]) -> list[dict]:
    """The results whose computation stayed finite, or all of them if none did.

    A diverged run is not a fair speed record: on an H200 ResNet-50 trained into NaNs
    drew 557 W at full clock where the same recipe on finite numbers sat at the 700 W cap
    (BENCHMARKS.md), so "best" is taken among finite results wherever there are some.
    """
    finite = [r for r in results if not (r.get("extra") or {}).get("nan")]
    return finite or results


def latest(results: list[dict]) -> list[dict]:
    """The newest result per (GPU, source, workload, variant, params, size, gpus); every published row
    is its own (two sources, or two systems of one source, for one GPU stand side by side)."""
    best: dict[tuple, dict] = {}
    for r in results:
        k = (gpu_of(r), r.get("source"), r["workload"], r["variant"], params_text(r.get("params")),
             r.get("size"), r.get("gpus") or 1,
             r.get("case_key") if r.get("source") == "published" else None)   # published rows never replace each other
        if k not in best or (r.get("id") or 0) > (best[k].get("id") or 0):
            best[k] = r
    return list(best.values())


def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def fmt_params(params: dict | None) -> str:
    """Compact, stable text of a params dict (sorted keys)."""
    return " ".join(f"{k}={v}" for k, v in sorted((params or {}).items()))


def message_bytes(r: dict) -> float | None:
    """A collective result's message size: extra.size_bytes, else params.size_mb in MiB."""
    size = (r.get("extra") or {}).get("size_bytes")
    if isinstance(size, (int, float)) and size > 0:
        return float(size)
    mb = (r.get("params") or {}).get("size_mb")
    return float(mb) * 2**20 if isinstance(mb, (int, float)) and mb > 0 else None


def engine_of(r: dict) -> str:
    """The engine class a result ran on: a published row says so (PyTorch eager or compiled, TensorRT,
    MXNet, ...); a measured one is PyTorch, compiled or not.  Figures of two classes are not compared."""
    if r.get("source") == "published":
        return (r.get("extra") or {}).get("engine") or "as published"
    served = (r.get("extra") or {}).get("engine")   # endpoint-serve: the server's engine and version
    if isinstance(served, str) and served:
        return served
    return "PyTorch compiled" if "compile" in str(r.get("variant") or "").split("+") else "PyTorch eager"
