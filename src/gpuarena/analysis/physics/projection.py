"""Projecting a GPU that was not measured from ones that were.

Per workload and precision class the time per item on GPU g is a sum of a
compute term, a memory term and a term that scales with neither:

    t(g) = a / P(g) + b / BW(g) + c

P(g): the catalog's dense peak at the precision the workload executes as on
g's generation, at the share of its quoted clock the card holds under its own
power limit (analysis/rows/power.py: an A100 PCIe is not an A100 SXM4); BW(g): the
catalog's memory bandwidth.  a is the FLOPs per
item over the compute efficiency, and physics holds it there: a >= F, the
workload class's FLOPs per item (no term runs above peak).  b is the bytes
per item over the memory efficiency, c the host, data-loading and launch time.

- Two or more GPUs measured in one class (same workload, precision class,
  engine, settings): a, b, c fitted by least squares on relative error with
  a >= F.
- One GPU measured (the usual case): the published cross-GPU family of the
  workload gives the compute efficiency F/a and the split of the rest between
  b and c; the reference then scales b and c only.  A different engine
  (compiled against the family's eager) or settings change the memory and
  overhead terms, not the FLOPs: scaling all three terms by one factor would
  put the compute term above peak.
- Every projection is then capped at what analysis.physics accepts for that
  GPU (the roofline and the tighter of its generation's compute and memory
  ceilings, or the card's own tuned figure), so advise never ranks a row that
  check rejects.

projection_check.validate() tests both paths with the held-out GPU's whole chip family left out
of every fit, and against cross-GPU ratios from sources no fit has seen
(data/holdout_ratios.csv).  The band is the 80th percentile of the deployed
path's held-out error.
"""

from __future__ import annotations

import csv
import functools
import math
import re

from gpuarena.analysis.rows import power
from gpuarena.analysis.rows import precision as P
from gpuarena.data import catalog
from gpuarena.analysis.rows.published import engine_class
from gpuarena.errors import UserError
from gpuarena.workloads import registry

# an unvalidated family: the deployed path p80 held-out error (18%) widened by half again and more
DEFAULT_BAND = 0.30


def family_prefix(workload: str) -> str | None:
    """The published cross-GPU family of a workload (one engine class measured on many GPUs by one
    publisher): its rows' workload text prefix, the class's ``published_family``; None without one."""
    return registry.fact(workload, "published_family")


def family_settings(workload: str) -> dict:
    """The settings the workload's family was published at (the class's ``family_settings``)."""
    return dict(registry.fact(workload, "family_settings", None) or {})


def flops_tflop(workload: str, settings: dict | None = None) -> float:
    """FLOPs per item, in TFLOP (the unit of a: t = a / P with P in TFLOP/s)."""
    cls = registry.get(workload)
    return float(cls.flops(cls.resolve_params(settings or {})) or 0.0) / 1e12


def chip(g: catalog.GPU) -> str:
    """The die a card is cut from: GA100 for every A100 and A800, GH100 for H100, H800, H200, H20."""
    m = re.search(r"\(([^)]*)\)", g.architecture)
    return (m.group(1) if m else g.architecture).strip()


def request_class(request: str) -> str:
    """Precision classes that share a peak column: bf16 and fp16 run on the same tensor cores."""
    return "fp16" if request in ("bf16", "fp16") else ("tf32" if request in ("tf32", "default") else request)


def peak_point(g: catalog.GPU, workload: str, request: str) -> tuple[float, float] | None:
    """(sustained peak TFLOP/s, bandwidth GB/s) of g for the workload's executed precision."""
    prec = P.peak_precision(workload, request, P.arch_of(g))
    peak, bw = power.sustained_peak(g, prec), g.memory_bandwidth_gbs
    return (peak, bw) if peak and bw else None


def _features(g: catalog.GPU, workload: str, request: str) -> tuple[float, float, float] | None:
    pb = peak_point(g, workload, request)
    return (1 / pb[0], 1 / pb[1], 1.0) if pb else None


def _solve(m: list[list[float]], v: list[float]) -> list[float] | None:
    """Gaussian elimination of a small square system; None when singular."""
    n = len(v)
    a = [row[:] + [v[i]] for i, row in enumerate(m)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(a[r][c]))
        if abs(a[piv][c]) < 1e-300:
            return None
        a[c], a[piv] = a[piv], a[c]
        for r in range(n):
            if r != c:
                f = a[r][c] / a[c][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    return [a[i][n] / a[i][i] for i in range(n)]


def fit(points: list[tuple[catalog.GPU, float]], workload: str, request: str,
        a_min: float = 0.0) -> tuple[float, float, float]:
    """(a, b, c) >= 0, a >= a_min (the FLOPs per item: nothing runs above peak), minimising the relative
    error of t = a/P + b/BW + c over (gpu, throughput) points (non-negative least squares by trying every
    subset of the three terms on what the FLOPs at peak leave)."""
    rows, rhs = [], []
    for g, thr in points:
        f = _features(g, workload, request)
        if f:
            rows.append([x * thr for x in f])       # each row scaled by 1/t: relative error
            rhs.append(1.0 - a_min * f[0] * thr)
    if not rows:
        raise UserError(f"no GPU with a peak for {workload} at {request}")
    best = None
    for subset in ((0, 1, 2), (0, 1), (0, 2), (1, 2), (0,), (1,), (2,), ()):
        if len(subset) > len(rows):
            continue
        coef = [0.0, 0.0, 0.0]
        if subset:
            m = [[sum(r[i] * r[j] for r in rows) for j in subset] for i in subset]
            sol = _solve(m, [sum(r[i] * y for r, y in zip(rows, rhs)) for i in subset])
            if sol is None or any(x < 0 for x in sol):
                continue
            for i, x in zip(subset, sol):
                coef[i] = x
        err = sum((sum(c * x for c, x in zip(coef, r)) - y) ** 2 for r, y in zip(rows, rhs))
        if best is None or err < best[0] - 1e-15:
            best = (err, (coef[0] + a_min, coef[1], coef[2]))
    return best[1]


def predict(abc: tuple[float, float, float], g: catalog.GPU, workload: str, request: str) -> float | None:
    f = _features(g, workload, request)
    if not f:
        return None
    t = sum(c * x for c, x in zip(abc, f))
    return 1.0 / t if t > 0 else None


def family(workload: str, request: str) -> list[dict]:
    """The published family's points for a workload and precision class: one per catalog GPU (the best
    figure published for it in that family), each with its rows' sources."""
    return [dict(p) for p in _family(workload, request_class(request))]


@functools.lru_cache(maxsize=None)
def _family(workload: str, want: str) -> tuple[dict, ...]:
    """family(), read once per process: the published file is package data (a report asked ~1,200 times)."""
    from gpuarena.analysis.rows.published import PUBLISHED_CSV

    prefix = family_prefix(workload)
    if not prefix:
        return ()
    best: dict[str, dict] = {}
    with open(PUBLISHED_CSV, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if not row["workload"].startswith(prefix) or row["num_gpus"] != "1" or row["metric"] != "throughput":
                continue
            p = row["precision"].lower()
            cls = "fp16" if re.search(r"\bamp\b|fp16|mixed", p) else "tf32"   # not "Ampere"
            g = catalog.find(row["gpu"])
            if cls != want or g is None:
                continue
            thr = float(row["value"])
            if g.name not in best or thr > best[g.name]["throughput"]:
                best[g.name] = {"gpu": g, "throughput": thr, "source": row["source"], "software": row["software"],
                                "batch_size": row["batch_size"], "engine": engine_class(row["software"])}
    return tuple(best.values())


def percentile(v: list[float], q: float) -> float:
    s = sorted(v)
    return s[min(len(s) - 1, max(0, int(math.ceil(q * len(s))) - 1))]


def family_shape(workload: str, cls: str, exclude_chip: str | None = None) -> tuple[float, float, float] | None:
    """(a, b, c) of the published family of a precision class at its published settings, a >= its FLOPs;
    without the GPUs of ``exclude_chip`` (a validation holds a whole die out)."""
    fam = [p for p in family(workload, cls) if chip(p["gpu"]) != exclude_chip]
    if len({chip(p["gpu"]) for p in fam}) < 2:
        return None
    return fit([(p["gpu"], p["throughput"]) for p in fam], workload, cls,
               a_min=flops_tflop(workload, family_settings(workload)))


def rescale(shape: tuple[float, float, float], family_flops: float, flops: float, g0: catalog.GPU, thr0: float,
            workload: str, request: str) -> tuple[tuple[float, float, float], str]:
    """The family's shape moved to one reference: the compute term keeps the family's compute efficiency
    (at the reference's FLOPs per item), the memory and overhead terms scale to meet the reference."""
    a, b, c = shape
    eff = min(1.0, family_flops / a) if a > 0 else 1.0
    a_t = flops / eff
    p0, bw0 = peak_point(g0, workload, request)
    rest, mem = 1.0 / thr0 - a_t / p0, b / bw0 + c
    if rest > 0 and mem > 0:
        k = rest / mem
        return (a_t, b * k, c * k), f"compute at the family's {eff:.0%} of peak, memory and overhead scaled {k:.2f}x"
    a_ref = p0 / thr0                      # the reference beats the family's compute efficiency: compute-bound
    return (max(a_ref, flops), 0.0, 0.0), "the reference is faster than the family's compute efficiency: compute-bound"


def deployed_path(workload: str, cls: str) -> list[dict]:
    """The path advise runs with one measured GPU: shape from the family with the target's die left out,
    scale from one reference on another die, cap at physics' limit; every (reference, target) pair.
    It reads the shipped evidence alone, so it is worked out once per (workload, class) in a process (the
    report's expected figures asked it once per result: 52 s of a 78 s report of 2,000 results)."""
    return [dict(r) for r in _deployed_once(workload, cls)]


@functools.lru_cache(maxsize=64)
def _deployed_once(workload: str, cls: str) -> tuple[dict, ...]:
    from gpuarena.analysis.physics import limits as X
    from gpuarena.analysis.physics.roofline import workload_params

    pts = family(workload, cls)
    ff = flops_tflop(workload, family_settings(workload))
    params = workload_params(workload, {k: v for k, v in (family_settings(workload) or {}).items()
                                          if k in ("image_size", "seq_len")})
    out = []
    for t in pts:
        shape = family_shape(workload, cls, exclude_chip=chip(t["gpu"]))
        if shape is None:
            continue
        for r in pts:
            if chip(r["gpu"]) == chip(t["gpu"]):
                continue
            abc, _ = rescale(shape, ff, ff, r["gpu"], r["throughput"], workload, cls)
            pred = predict(abc, t["gpu"], workload, cls)
            if not pred:
                continue
            try:
                at = {**params, "batch_size": int(t["batch_size"] or 1)}
                pred = min(pred, X.limit(workload, t["gpu"], cls, at).highest)
            except (UserError, ValueError):
                pass
            out.append({"path": "deployed (one reference)", "workload": workload, "precision": cls,
                        "gpu": t["gpu"].name, "reference": r["gpu"].name, "published": t["throughput"],
                        "predicted": pred, "pct_error": (pred / t["throughput"] - 1) * 100,
                        "engine": t["engine"], "source": t["source"]})
    return tuple(out)


def consumer(g: catalog.GPU) -> bool:
    """A consumer card (GeForce): left out of data-centre advice unless asked."""
    return getattr(g, "segment", "") == "consumer" or "geforce" in g.name.lower()


def band(workload: str, request: str, reference: catalog.GPU | None = None) -> float:
    """The 80th percentile of the deployed path's held-out error for the family, as a fraction; from the
    pairs whose reference is on the same die as ``reference`` where there are enough of them."""
    rows = deployed_path(workload, request_class(request)) if family_prefix(workload) else []
    if reference is not None:
        mine = [r for r in rows if chip(catalog.match(r["reference"])) == chip(reference)]
        rows = mine if len(mine) >= 3 else rows
    if len(rows) < 3:
        return DEFAULT_BAND
    return percentile([abs(r["pct_error"]) / 100 for r in rows], 0.8)


def calibrate(refs: list[tuple[catalog.GPU, float]], workload: str, request: str,
              settings: dict | None = None) -> tuple[tuple[float, float, float], str]:
    """(a, b, c) from the reference GPUs of one class, and how it was calibrated."""
    flops = flops_tflop(workload, settings)
    gpus = {g.name for g, _ in refs}
    if len(gpus) >= 2:
        return fit(refs, workload, request, a_min=flops), f"fitted on {len(gpus)} GPUs of the same class"
    g0, thr0 = refs[0]
    # the family of the request's class, else of the nearest class with tensor cores (an IEEE FP32 step has
    # the TF32 step's memory and fixed costs; only its compute term, on the FP32 peak, differs)
    for cls in dict.fromkeys((request_class(request), "tf32", "fp16")):
        shape = family_shape(workload, cls)
        if shape is not None:
            abc, how = rescale(shape, flops_tflop(workload, family_settings(workload)), flops, g0, thr0,
                               workload, request)
            return abc, (f"split from the published {family_prefix(workload).split(' (')[0]} family ({cls.upper()}), "
                         f"{how}, to {g0.short}")
    return (peak_point(g0, workload, request)[0] / thr0, 0.0, 0.0), \
        f"compute-bound scaling from {g0.short} (no published family to split compute and memory)"
