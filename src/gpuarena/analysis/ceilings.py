"""How close to peak a workload class has credibly come, per executed precision.

A claim is judged against the best share of peak that anyone has measured or
credibly published for the same workload at the same executed precision
(data/ceilings.csv, every row with its source, its share computed here from
the workload's FLOPs and the catalog peak, never typed), and against the best
finite result gpuarena itself holds in the database.  A blanket "80% of peak"
calls a 63%-of-peak TensorRT BERT figure plausible and a 68%-of-peak SD figure
too; per-workload ceilings do not.
"""

from __future__ import annotations

import csv
import functools
import math
from pathlib import Path

from gpuarena.analysis import precision as P
from gpuarena.data import catalog
from gpuarena.errors import UserError

CEILINGS_CSV = Path(__file__).parents[1] / "data" / "ceilings.csv"
CONDITIONS = {"batch_size": "batch_size", "seq_len": "seq_len", "image_size": "image_size",
              "steps": "inference_steps"}


def workload_params(workload: str, given: dict) -> dict:
    """The workload's parameters with the claim's conditions applied (unknown ones refused)."""
    from gpuarena.workloads import registry

    cls = registry.get(workload)
    known = cls.param_map()
    params = {}
    for key, name in CONDITIONS.items():
        v = given.get(key)
        if v in (None, ""):
            continue
        try:
            iv = int(float(v))
        except (TypeError, ValueError):
            raise UserError(f"{key} {v!r}: must be a whole number") from None
        if not math.isfinite(float(v)) or iv < 1 or iv != float(v):
            raise UserError(f"{key} {v!r}: must be a whole number >= 1")
        if name not in known:
            raise UserError(f"{workload} has no {key} condition (it takes: "
                            + ", ".join(k for k, n in CONDITIONS.items() if n in known) + ")")
        params[name] = iv
    return cls.resolve_params(params)


def flops_per_item(workload: str, params: dict) -> float:
    """FLOPs per item from the workload class at these parameters (a pure function of them)."""
    from gpuarena.workloads import registry

    f = registry.get(workload).flops(params)
    if not f:
        raise UserError(f"workload {workload!r} has no FLOP count, so its claims cannot be checked")
    return float(f)


def share(workload: str, gpu: catalog.GPU, request: str, throughput: float, params: dict) -> tuple[float, str, float]:
    """(share of the executed precision's peak, that precision, its peak TFLOP/s)."""
    prec = P.peak_precision(workload, request, P.arch_of(gpu))
    peak = gpu.peaks.get(prec)
    if not peak:
        raise UserError(f"{gpu.name} has no {prec} peak in the catalog; it has: {', '.join(gpu.peaks)}")
    return throughput * flops_per_item(workload, params) / 1e12 / peak, prec, peak


@functools.lru_cache(maxsize=1)
def published_ceilings() -> tuple[dict, ...]:
    out = []
    with open(CEILINGS_CSV, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            g = catalog.match(row["gpu"])
            thr = float(row["throughput"]) if row["throughput"] else 1.0 / float(row["latency_s"])
            params = workload_params(row["workload"], row)
            s, prec, _ = share(row["workload"], g, P.request_of(row["precision"]), thr, params)
            out.append({"workload": row["workload"], "precision": prec, "share": s, "gpu": g.name,
                        "throughput": thr, "engine": row["engine"], "source": row["source"]})
    return tuple(out)


def is_finite_result(r: dict) -> bool:
    """A result a decision may rest on: ok, finite output, a throughput."""
    text = " ".join(r.get("warnings") or []).lower()
    return (r.get("status") == "ok" and bool(r.get("throughput_median"))
            and math.isfinite(r["throughput_median"]) and "nan" not in text
            and not (r.get("extra") or {}).get("nan"))


def measured_ceilings(store, workload: str) -> list[dict]:
    """Shares of peak of the finite measured results in the database (never a diverged one)."""
    if store is None:
        return []
    from gpuarena.analysis.rows import gpu_of, is_search

    out = []
    for r in store.results(workload=workload, status="ok"):
        if r.get("source") == "published" or (r.get("gpus") or 1) != 1 or not is_finite_result(r) or is_search(r):
            continue
        g = catalog.find(gpu_of(r))
        if g is None or not r.get("flops_per_item"):
            continue
        variants = frozenset(str(r.get("variant") or "seed").split("+"))
        try:
            req = P.request_of_variants(variants, r.get("precision"))
            prec = P.peak_precision(workload, req, P.arch_of(g))
        except UserError:
            continue
        if not g.peaks.get(prec):
            continue
        out.append({"workload": workload, "precision": prec, "gpu": g.name, "throughput": r["throughput_median"],
                    "share": r["throughput_median"] * r["flops_per_item"] / 1e12 / g.peaks[prec],
                    "engine": "PyTorch compiled" if "compile" in variants else "PyTorch eager",
                    "source": f"gpuarena measurement (run {r.get('run_id')}, {r.get('variant')})"})
    return out


def ceiling(workload: str, prec: str, store=None) -> dict | None:
    """The best credible share of `prec`'s peak for the workload, with its source; None if none known."""
    cands = [c for c in (*published_ceilings(), *measured_ceilings(store, workload))
             if c["workload"] == workload and c["precision"] == prec]
    return max(cands, key=lambda c: c["share"]) if cands else None
