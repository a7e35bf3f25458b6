"""Projecting a GPU that was not measured from ones that were.

Per workload and precision class the time per item on GPU g is a sum of a
compute term, a memory term and a term that scales with neither:

    t(g) = a / P(g) + b / BW(g) + c

P(g): the catalog's dense peak at the precision the workload executes as on
g's generation; BW(g): the catalog's memory bandwidth.  a is the FLOPs per
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
  GPU (the roofline and the best attainment credibly reached on its
  generation), so advise never ranks a row that check rejects.

validate() tests both paths with the held-out GPU's whole chip family left out
of every fit, and against cross-GPU ratios from sources no fit has seen
(data/holdout_ratios.csv).  The band is the 80th percentile of the deployed
path's held-out error.
"""

from __future__ import annotations

import csv
import math
import re

from gpuarena.analysis import precision as P
from gpuarena.data import catalog
from gpuarena.data.published import engine_class
from gpuarena.errors import UserError

DEFAULT_BAND = 0.30       # an unvalidated family: the deployed path p80 held-out error (18%) widened by half again and more
# Published cross-GPU families: one engine class measured on many GPUs by one publisher.
FAMILIES = {"resnet50-train": "ResNet-50 training (DLE PyTorch)",
            "bert-large-train": "BERT-Large SQuAD fine-tuning (DLE PyTorch",
            "bert-large-infer": "BERT-Large SQuAD fine-tuning (DLE PyTorch"}   # same encoder arithmetic
# The settings the families were published at (Lambda's DLE runs: ImageNet 224 px, SQuAD 384 tokens).
FAMILY_SETTINGS = {"resnet50-train": {"image_size": 224}, "bert-large-train": {"seq_len": 384},
                   "bert-large-infer": {"seq_len": 384}}


def flops_tflop(workload: str, settings: dict | None = None) -> float:
    """FLOPs per item, in TFLOP (the unit of a: t = a / P with P in TFLOP/s)."""
    from gpuarena.workloads import registry

    cls = registry.get(workload)
    return float(cls.flops(cls.resolve_params(settings or {})) or 0.0) / 1e12


def chip(g: catalog.GPU) -> str:
    """The die a card is cut from: GA100 for every A100 and A800, GH100 for H100, H800, H200, H20."""
    m = re.search(r"\(([^)]*)\)", g.architecture)
    return (m.group(1) if m else g.architecture).strip()


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


def _pctl(v: list[float], q: float) -> float:
    s = sorted(v)
    return s[min(len(s) - 1, max(0, int(math.ceil(q * len(s))) - 1))]


def family_shape(workload: str, cls: str, exclude_chip: str | None = None) -> tuple[float, float, float] | None:
    """(a, b, c) of the published family of a precision class at its published settings, a >= its FLOPs;
    without the GPUs of ``exclude_chip`` (a validation holds a whole die out)."""
    fam = [p for p in family(workload, cls) if chip(p["gpu"]) != exclude_chip]
    if len({chip(p["gpu"]) for p in fam}) < 2:
        return None
    return fit([(p["gpu"], p["throughput"]) for p in fam], workload, cls,
               a_min=flops_tflop(workload, FAMILY_SETTINGS.get(workload)))


def rescale(shape: tuple[float, float, float], family_flops: float, flops: float, g0: catalog.GPU, thr0: float,
            workload: str, request: str) -> tuple[tuple[float, float, float], str]:
    """The family's shape moved to one reference: the compute term keeps the family's compute efficiency
    (at the reference's FLOPs per item), the memory and overhead terms scale to meet the reference."""
    a, b, c = shape
    eff = min(1.0, family_flops / a) if a > 0 else 1.0
    a_t = flops / eff
    p0, bw0 = _point(g0, workload, request)
    rest, mem = 1.0 / thr0 - a_t / p0, b / bw0 + c
    if rest > 0 and mem > 0:
        k = rest / mem
        return (a_t, b * k, c * k), f"compute at the family's {eff:.0%} of peak, memory and overhead scaled {k:.2f}x"
    a_ref = p0 / thr0                      # the reference beats the family's compute efficiency: compute-bound
    return (max(a_ref, flops), 0.0, 0.0), "the reference is faster than the family's compute efficiency: compute-bound"


def _deployed(workload: str, cls: str) -> list[dict]:
    """The path advise runs with one measured GPU: shape from the family with the target's die left out,
    scale from one reference on another die, cap at physics' limit; every (reference, target) pair."""
    from gpuarena.analysis import physics as X

    pts = family(workload, cls)
    ff = flops_tflop(workload, FAMILY_SETTINGS.get(workload))
    params = X.workload_params(workload, {k: v for k, v in (FAMILY_SETTINGS.get(workload) or {}).items()
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
                pred = min(pred, X.limit(workload, t["gpu"], cls, {**params, "batch_size": int(t["batch_size"] or 1)}).highest)
            except (UserError, ValueError):
                pass
            out.append({"path": "deployed (one reference)", "workload": workload, "precision": cls,
                        "gpu": t["gpu"].name, "reference": r["gpu"].name, "published": t["throughput"],
                        "predicted": pred, "pct_error": (pred / t["throughput"] - 1) * 100,
                        "engine": t["engine"], "source": t["source"]})
    return out


def _leave_chip_out(workload: str, cls: str) -> list[dict]:
    """Every GPU predicted from a fit on the family without its whole die (the A100s' twins go with it)."""
    pts = family(workload, cls)
    a_min = flops_tflop(workload, FAMILY_SETTINGS.get(workload))
    out = []
    for p in pts:
        rest = [(q["gpu"], q["throughput"]) for q in pts if chip(q["gpu"]) != chip(p["gpu"])]
        if len({chip(g) for g, _ in rest}) < 2:
            continue
        pred = predict(fit(rest, workload, cls, a_min=a_min), p["gpu"], workload, cls)
        if pred:
            out.append({"path": "fitted (leave one die out)", "workload": workload, "precision": cls,
                        "gpu": p["gpu"].name, "reference": "", "published": p["throughput"], "predicted": pred,
                        "pct_error": (pred / p["throughput"] - 1) * 100, "engine": p["engine"], "source": p["source"]})
    return out


def consumer(g: catalog.GPU) -> bool:
    """A consumer card (GeForce): left out of data-centre advice unless asked."""
    return getattr(g, "segment", "") == "consumer" or "geforce" in g.name.lower()


def _summary(rows: list[dict]) -> dict:
    errs = [abs(r["pct_error"]) for r in rows]
    return {"n": len(rows), "median_abs_pct_error": _median(errs) if errs else None,
            "p80_abs_pct_error": _pctl(errs, 0.8) if errs else None, "max_abs_pct_error": max(errs) if errs else None}


def holdout(groups=None) -> list[dict]:
    """Cross-GPU ratios from sources no fit has seen (data/holdout_ratios.csv): the family's full shape
    predicts b / a, compared with the published ratio."""
    from gpuarena.data.published import holdout_ratios

    out = []
    for h in holdout_ratios():
        w, cls = h["workload"], request_class(h["precision"])
        if w not in FAMILIES:
            continue
        shape = family_shape(w, cls)
        a, b = catalog.find(h["gpu_a"]), catalog.find(h["gpu_b"])
        if shape is None or a is None or b is None:
            continue
        pa, pb = predict(shape, a, w, cls), predict(shape, b, w, cls)
        if not (pa and pb):
            continue
        bw = b.memory_bandwidth_gbs / a.memory_bandwidth_gbs
        out.append({"path": "hold-out ratio", "workload": w, "precision": cls, "gpu": b.name, "reference": a.name,
                    "published": h["ratio"], "predicted": pb / pa, "pct_error": (pb / pa / h["ratio"] - 1) * 100,
                    "bandwidth_ratio": bw, "engine": h["engine"], "source": h["source"]})
    return out


VALIDATED = (("resnet50-train", "tf32"), ("resnet50-train", "fp16"), ("bert-large-train", "tf32"),
             ("bert-large-train", "fp16"))


def validate(groups=VALIDATED) -> dict:
    """Both paths advise uses, per family, with the held-out GPU's die left out of every fit; ranks against
    the bandwidth-only baseline; cross-GPU ratios from independent sources."""
    rows, per_group, rhos, base = [], {}, {}, {}
    for w, req in groups:
        fitted, deployed = _leave_chip_out(w, req), _deployed(w, req)
        per_group[f"{w} {req}"] = {"fitted": _summary(fitted), "deployed": _summary(deployed)}
        if len(fitted) >= 3:
            rhos[f"{w} {req}"] = spearman([r["predicted"] for r in fitted], [r["published"] for r in fitted])
            base[f"{w} {req}"] = spearman([catalog.match(r["gpu"]).memory_bandwidth_gbs for r in fitted],
                                          [r["published"] for r in fitted])
        rows += fitted + deployed
    if not rows:
        raise UserError("no published cross-GPU family to validate against")
    hold = holdout()
    everything = [r for r in rows if r["path"].startswith("deployed")]
    deployed = [r for r in everything if not (consumer(catalog.match(r["gpu"])) or consumer(catalog.match(r["reference"])))]
    return {"n": len(rows), "deployed": _summary(deployed), "deployed_with_consumer_cards": _summary(everything),
            "fitted": _summary([r for r in rows if r["path"].startswith("fitted")]),
            "holdout": _summary(hold), "per_group": per_group,
            "median_abs_pct_error": _summary(deployed)["median_abs_pct_error"],
            "spearman": sum(rhos.values()) / len(rhos) if rhos else None, "spearman_per_group": rhos,
            "bandwidth_only_spearman": sum(base.values()) / len(base) if base else None,
            "worst": sorted(deployed, key=lambda r: -abs(r["pct_error"]))[:3], "rows": rows + hold,
            "form_chosen_on": ("the form (a/P + b/BW + c, a >= FLOPs) was chosen on the Lambda DLE PyTorch families "
                               "of ResNet-50 and BERT-Large (TF32 and FP16); every error here holds the target's die "
                               "out of the fit, and the hold-out ratios come from other publishers")}


def band(workload: str, request: str, reference: catalog.GPU | None = None) -> float:
    """The 80th percentile of the deployed path's held-out error for the family, as a fraction; from the
    pairs whose reference is on the same die as ``reference`` where there are enough of them."""
    rows = _deployed(workload, request_class(request)) if workload in FAMILIES else []
    if reference is not None:
        mine = [r for r in rows if chip(catalog.match(r["reference"])) == chip(reference)]
        rows = mine if len(mine) >= 3 else rows
    if len(rows) < 3:
        return DEFAULT_BAND
    return _pctl([abs(r["pct_error"]) / 100 for r in rows], 0.8)


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
            abc, how = rescale(shape, flops_tflop(workload, FAMILY_SETTINGS.get(workload)), flops, g0, thr0,
                               workload, request)
            return abc, (f"split from the published {FAMILIES[workload].split(' (')[0]} family ({cls.upper()}), "
                         f"{how}, to {g0.short}")
    return (_point(g0, workload, request)[0] / thr0, 0.0, 0.0), \
        f"compute-bound scaling from {g0.short} (no published family to split compute and memory)"


VALIDATION_COLUMNS = [("path", "path"), ("workload", "workload"), ("precision", "precision"), ("gpu", "GPU"),
                      ("reference", "from"), ("published", "published"), ("predicted", "predicted"),
                      ("error", "error"), ("source", "source")]


def render_validation(result: dict, fmt: str) -> str:
    from gpuarena.analysis.tables import render as _render

    if fmt == "json":
        return _render([], [], "json", data={k: v for k, v in result.items()})

    def short(name):
        g = catalog.find(name) if name else None
        return g.short if g else name

    rows = [{**r, "gpu": short(r["gpu"]), "reference": short(r["reference"]), "error": f"{r['pct_error']:+.0f}%"}
            for r in result["rows"] if not r["path"].startswith("deployed")]

    def line(name, s):
        if not s["n"]:
            return f"{name}: no points"
        return (f"{name}: n = {s['n']}, median {s['median_abs_pct_error']:.1f}%, p80 {s['p80_abs_pct_error']:.1f}%, "
                f"max {s['max_abs_pct_error']:.1f}%")
    notes = [line("deployed path (one reference, target's die out of the shape; data-centre cards)", result["deployed"]),
             line("deployed path with consumer cards as reference or target", result["deployed_with_consumer_cards"]),
             line("fitted path (leave one die out)", result["fitted"]),
             line("hold-out cross-GPU ratios", result["holdout"]),
             f"Spearman {result['spearman']:.2f} against {result['bandwidth_only_spearman']:.2f} for ranking by "
             "datasheet bandwidth alone" if result["spearman"] is not None else "Spearman: too few points",
             result["form_chosen_on"]]
    return _render(VALIDATION_COLUMNS, rows, fmt, title="Projection model, held out", notes=notes)
