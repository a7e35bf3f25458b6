"""Projecting a GPU that was not measured from ones that were.

Per workload and precision class the time per item on GPU g is a sum of a
compute term and a memory term:

    t(g) = a / P(g) + b / BW(g) + c

P(g): the catalog's dense peak at the precision the workload executes as on
g's generation (analysis.precision: TF32 convolutions for FP32 ResNet-50 on
Ampere and newer, FP32 on a V100); BW(g): the catalog's memory bandwidth.
a = FLOPs per item / compute efficiency, b = bytes per item / memory
efficiency, c = time per item that scales with neither (host, data
loading, launches: what keeps the published B200 figures near the H200's).
All three are calibrated by least squares (relative error) on the
GPUs that were measured in one class (same workload, precision class and
engine); with a single reference GPU the ratio a:b (the share of the step
that is memory-bound) comes from the published cross-GPU family of the
workload and precision (FAMILIES) and only the scale from the reference.
b is the effective bytes per item; docs/projections.md sets it beside the
derivation from the model's activations.

The band is the 80th percentile of the leave-one-GPU-out error of the family
(validate()), so a projection says how far it has been wrong before.
"""

from __future__ import annotations

import csv
import math
import re

from gpuarena.analysis import precision as P
from gpuarena.data import catalog
from gpuarena.data.published import engine_class
from gpuarena.errors import UserError

DEFAULT_BAND = 0.30       # when no family has been validated: the worst group error seen in validate(), rounded up
# Published cross-GPU families: one engine class measured on many GPUs by one publisher.
FAMILIES = {"resnet50-train": "ResNet-50 training (DLE PyTorch)",
            "bert-large-train": "BERT-Large SQuAD fine-tuning (DLE PyTorch",
            "bert-large-infer": "BERT-Large SQuAD fine-tuning (DLE PyTorch"}   # same encoder arithmetic


def request_class(request: str) -> str:
    """Precision classes that share a peak column: bf16 and fp16 run on the same tensor cores."""
    return "fp16" if request in ("bf16", "fp16") else ("tf32" if request in ("tf32", "default") else request)


def _point(g: catalog.GPU, workload: str, request: str) -> tuple[float, float] | None:
    prec = P.peak_precision(workload, request, P.arch_of(g))
    peak, bw = g.peaks.get(prec), g.memory_bandwidth_gbs
    return (peak, bw) if peak and bw else None


def _features(g: catalog.GPU, workload: str, request: str) -> tuple[float, float, float] | None:
    pb = _point(g, workload, request)
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


def fit(points: list[tuple[catalog.GPU, float]], workload: str, request: str) -> tuple[float, float, float]:
    """(a, b, c) >= 0 minimising the relative error of t = a/P + b/BW + c over (gpu, throughput) points
    (non-negative least squares by trying every subset of the three terms)."""
    rows = []
    for g, thr in points:
        f = _features(g, workload, request)
        if f:
            rows.append([x * thr for x in f])       # each row scaled by 1/t: relative error
    if not rows:
        raise UserError(f"no GPU with a peak for {workload} at {request}")
    best = None
    for subset in ((0, 1, 2), (0, 1), (0, 2), (1, 2), (0,), (1,), (2,)):
        if len(subset) > len(rows):
            continue
        m = [[sum(r[i] * r[j] for r in rows) for j in subset] for i in subset]
        sol = _solve(m, [sum(r[i] for r in rows) for i in subset])
        if sol is None or any(x < 0 for x in sol):
            continue
        coef = [0.0, 0.0, 0.0]
        for i, x in zip(subset, sol):
            coef[i] = x
        err = sum((sum(c * x for c, x in zip(coef, r)) - 1) ** 2 for r in rows)
        if best is None or err < best[0] - 1e-15:
            best = (err, tuple(coef))
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
    from gpuarena.data.published import PUBLISHED_CSV

    prefix = FAMILIES.get(workload)
    if not prefix:
        return []
    want = request_class(request)
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
    return list(best.values())


def spearman(xs: list[float], ys: list[float]) -> float:
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        for k, i in enumerate(order):
            r[i] = float(k)
        return r
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return cov / den if den else float("nan")


def _median(v: list[float]) -> float:
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def _leave_one_out(workload: str, request: str) -> list[dict]:
    pts = family(workload, request)
    out = []
    for i, p in enumerate(pts):
        rest = [(q["gpu"], q["throughput"]) for j, q in enumerate(pts) if j != i]
        if len(rest) < 2:
            continue
        pred = predict(fit(rest, workload, request), p["gpu"], workload, request)
        if pred:
            out.append({"workload": workload, "precision": request, "gpu": p["gpu"].name,
                        "published": p["throughput"], "predicted": pred, "pct_error": (pred / p["throughput"] - 1) * 100,
                        "engine": p["engine"], "source": p["source"]})
    return out


VALIDATED = (("resnet50-train", "tf32"), ("resnet50-train", "fp16"), ("bert-large-train", "tf32"),
             ("bert-large-train", "fp16"))


def validate(groups=VALIDATED) -> dict:
    """Leave-one-GPU-out over the published cross-GPU families: predict each GPU from the others of its
    family, compare with what was published.  Spearman is the mean over groups (ranks only mean
    something within one workload and precision)."""
    rows, rhos = [], {}
    for w, req in groups:
        loo = _leave_one_out(w, req)
        if len(loo) >= 3:
            rhos[f"{w} {req}"] = spearman([r["predicted"] for r in loo], [r["published"] for r in loo])
        rows += loo
    if not rows:
        raise UserError("no published cross-GPU family to validate against")
    errs = [abs(r["pct_error"]) for r in rows]
    return {"n": len(rows), "median_abs_pct_error": _median(errs), "spearman": sum(rhos.values()) / len(rhos),
            "spearman_per_group": rhos,
            "worst": sorted(rows, key=lambda r: -abs(r["pct_error"]))[:3], "rows": rows}


def band(workload: str, request: str) -> float:
    """The 80th percentile of the family's leave-one-out error, as a fraction."""
    loo = _leave_one_out(workload, request_class(request))
    if len(loo) < 3:
        return DEFAULT_BAND
    errs = sorted(abs(r["pct_error"]) / 100 for r in loo)
    return errs[min(len(errs) - 1, int(math.ceil(0.8 * len(errs))) - 1)]


def calibrate(refs: list[tuple[catalog.GPU, float]], workload: str, request: str) -> tuple[tuple[float, float, float], str]:
    """(a, b) from the reference GPUs of one class, and how it was calibrated."""
    gpus = {g.name for g, _ in refs}
    if len(gpus) >= 2:
        return fit(refs, workload, request), f"fitted on {len(gpus)} GPUs of the same class"
    g0, thr0 = refs[0]
    # the family of the request's class, else of the nearest class with tensor cores (an IEEE FP32 step has
    # the TF32 step's memory and fixed costs; only its compute term, on the FP32 peak, differs)
    for cls in dict.fromkeys((request_class(request), "tf32", "fp16")):
        fam = family(workload, cls)
        if len(fam) >= 2:
            shape = fit([(p["gpu"], p["throughput"]) for p in fam], workload, cls)
            how = (f"compute/memory split from the published {FAMILIES[workload].split(' (')[0]} family "
                   f"({cls.upper()}), scaled to {g0.short}")
            break
    else:
        shape, how = (1.0, 0.0, 0.0), f"compute-bound scaling from {g0.short} (no published family to split compute and memory)"
    k = predict(shape, g0, workload, request) / thr0      # a uniform scale keeps the split
    return tuple(x * k for x in shape), how


VALIDATION_COLUMNS = [("workload", "workload"), ("precision", "precision"), ("gpu", "GPU"),
                      ("published", "published items/s"), ("predicted", "predicted"), ("error", "error"),
                      ("engine", "engine"), ("source", "source")]


def render_validation(result: dict, fmt: str) -> str:
    from gpuarena.analysis.tables import render as _render

    if fmt == "json":
        return _render([], [], "json", data={k: result[k] for k in ("n", "median_abs_pct_error", "spearman",
                                                                        "spearman_per_group", "worst", "rows")})
    rows = [{**r, "gpu": catalog.match(r["gpu"]).short, "error": f"{r['pct_error']:+.0f}%"} for r in result["rows"]]
    notes = [f"n = {result['n']}, median absolute error {result['median_abs_pct_error']:.1f}%, Spearman "
             f"{result['spearman']:.2f} (mean over groups: "
             + ", ".join(f"{k} {v:.2f}" for k, v in result["spearman_per_group"].items()) + ")"]
    return _render(VALIDATION_COLUMNS, rows, fmt, title="Projection model, leave one GPU out", notes=notes)
