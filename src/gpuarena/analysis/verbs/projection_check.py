"""The projection model held out: both paths advise uses, with the held-out GPU's whole die
left out of every fit, ranked against the bandwidth-only baseline, cross-GPU ratios from
sources no fit has seen (data/holdout_ratios.csv), and the ratio of each lower-power card to
its sibling of the same silicon and memory (A100 PCIe against A100 SXM4) with their die out of
the fit.  See analysis/physics/projection.py for the model."""

from __future__ import annotations

import math
from typing import Optional, Union

from pydantic import BaseModel, ConfigDict

from gpuarena.analysis.physics.projection import (deployed_path, percentile, chip, consumer, family, family_prefix,
                                          family_settings, family_shape, fit, flops_tflop, predict, request_class)
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry

PRECISION_CLASSES = ("tf32", "fp16")   # the families' published precision classes


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


def _leave_chip_out(workload: str, cls: str) -> list[dict]:
    """Every GPU predicted from a fit on the family without its whole die (the A100s' twins go with it)."""
    pts = family(workload, cls)
    a_min = flops_tflop(workload, family_settings(workload))
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


Num = Union[int, float]          # a figure keeps its type in the JSON


class ErrorSummary(BaseModel):
    """The absolute percentage errors of one path: how many points, their median, 80th percentile and worst."""

    n: int
    median_abs_pct_error: Optional[Num] = None
    p80_abs_pct_error: Optional[Num] = None
    max_abs_pct_error: Optional[Num] = None


class GroupSummary(BaseModel):
    """One family (workload and precision class): both paths' errors."""

    fitted: ErrorSummary
    deployed: ErrorSummary


class ValidationRow(BaseModel):
    """One held-out figure against its prediction; a hold-out ratio, a training or serving row adds what it
    rests on (bandwidth_ratio, mfu, share, ...), kept as given."""

    model_config = ConfigDict(extra="allow")
    path: str
    workload: str
    precision: Optional[str] = None
    gpu: str
    reference: str
    published: Num
    predicted: Num
    pct_error: Num
    engine: Optional[str] = None
    source: str


class LeftOut(BaseModel):
    """A published run the training hold-out has no comparable evidence for."""

    what: str
    source: str


class Validation(BaseModel):
    """`gpuarena advise --validate`: the projection model's held-out errors per path, and its ranking against
    ranking by datasheet bandwidth alone."""

    n: int
    deployed: ErrorSummary
    deployed_with_consumer_cards: ErrorSummary
    fitted: ErrorSummary
    holdout: ErrorSummary
    siblings: ErrorSummary
    per_group: dict[str, GroupSummary]
    holdout_training: ErrorSummary
    holdout_training_without_evidence: list[LeftOut]
    holdout_serving: ErrorSummary
    holdout_serving_ceiling_rejects: int
    median_abs_pct_error: Optional[Num] = None
    spearman: Optional[Num] = None
    spearman_per_group: dict[str, Num]
    bandwidth_only_spearman: Optional[Num] = None
    worst: list[ValidationRow]
    rows: list[ValidationRow]
    form_chosen_on: str


def _summary(rows: list[dict]) -> dict:
    errs = [abs(r["pct_error"]) for r in rows]
    return {"n": len(rows), "median_abs_pct_error": _median(errs) if errs else None,
            "p80_abs_pct_error": percentile(errs, 0.8) if errs else None,
            "max_abs_pct_error": max(errs) if errs else None}


def holdout(groups=None) -> list[dict]:
    """Cross-GPU ratios from sources no fit has seen (data/holdout_ratios.csv): the family's full shape
    predicts b / a, compared with the published ratio."""
    from gpuarena.analysis.rows.published import holdout_ratios

    out = []
    for h in holdout_ratios():
        w, cls = h["workload"], request_class(h["precision"])
        if not family_prefix(w):
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


def _same_silicon_lower_power(a: catalog.GPU, b: catalog.GPU) -> bool:
    """b is a's die, SMs, deep-learning peaks and memory size at a lower power limit (A100 PCIe, A100 SXM4)."""
    def dl(g):
        return {k: v for k, v in g.peaks.items() if k != "fp64"}
    return (a.architecture == b.architecture and a.sm_count == b.sm_count and dl(a) == dl(b)
            and a.memory_gb == b.memory_gb and bool(a.tdp_w and b.tdp_w) and b.tdp_w < a.tdp_w)


def siblings(groups=None) -> list[dict]:
    """Each lower-power card's published figure over its sibling's, in one family (one publisher, one recipe),
    against the ratio the family's shape gives them with their die out of the fit."""
    out = []
    for w, cls in groups or validated():
        pts = family(w, cls)
        for hi in pts:
            for lo in (p for p in pts if _same_silicon_lower_power(hi["gpu"], p["gpu"])):
                shape = family_shape(w, cls, exclude_chip=chip(hi["gpu"]))
                pa, pb = (predict(shape, p["gpu"], w, cls) if shape else None for p in (hi, lo))
                if not (pa and pb):
                    continue
                ratio = lo["throughput"] / hi["throughput"]
                out.append({"path": "power-limited sibling", "workload": w, "precision": cls, "gpu": lo["gpu"].name,
                            "reference": hi["gpu"].name, "published": ratio, "predicted": pb / pa,
                            "pct_error": (pb / pa / ratio - 1) * 100, "engine": lo["engine"],
                            "source": f"{lo['source']}; {hi['source']}"})
    return out


def validated() -> tuple[tuple[str, str], ...]:
    """(workload, precision class) of every training workload with a published family, in registry order."""
    return tuple((name, req) for name, cls in registry.classes().items()
                 if cls.published_family and cls.trains for req in PRECISION_CLASSES)


def validate(groups=None) -> Validation:
    """Both paths advise uses, per family, with the held-out GPU's die left out of every fit; ranks against
    the bandwidth-only baseline; cross-GPU ratios from independent sources."""
    rows, per_group, rhos, base = [], {}, {}, {}
    for w, req in groups or validated():
        fitted, deployed = _leave_chip_out(w, req), deployed_path(w, req)
        per_group[f"{w} {req}"] = {"fitted": _summary(fitted), "deployed": _summary(deployed)}
        if len(fitted) >= 3:
            rhos[f"{w} {req}"] = spearman([r["predicted"] for r in fitted], [r["published"] for r in fitted])
            base[f"{w} {req}"] = spearman([catalog.match(r["gpu"]).memory_bandwidth_gbs for r in fitted],
                                          [r["published"] for r in fitted])
        rows += fitted + deployed
    if not rows:
        raise UserError("no published cross-GPU family to validate against")
    hold, sib = holdout(), siblings(groups)
    from gpuarena.analysis.verbs import llm_holdout

    train, apart = llm_holdout.training()
    serve, rejected = llm_holdout.serving()
    everything = [r for r in rows if r["path"].startswith("deployed")]
    deployed = [r for r in everything
                if not (consumer(catalog.match(r["gpu"])) or consumer(catalog.match(r["reference"])))]
    return Validation.model_validate({
            "n": len(rows), "deployed": _summary(deployed), "deployed_with_consumer_cards": _summary(everything),
            "fitted": _summary([r for r in rows if r["path"].startswith("fitted")]),
            "holdout": _summary(hold), "siblings": _summary(sib), "per_group": per_group,
            "holdout_training": _summary(train), "holdout_training_without_evidence": apart,
            "holdout_serving": _summary(serve), "holdout_serving_ceiling_rejects": rejected,
            "median_abs_pct_error": _summary(deployed)["median_abs_pct_error"],
            "spearman": sum(rhos.values()) / len(rhos) if rhos else None, "spearman_per_group": rhos,
            "bandwidth_only_spearman": sum(base.values()) / len(base) if base else None,
            "worst": sorted(deployed, key=lambda r: -abs(r["pct_error"]))[:3],
            "rows": rows + hold + sib + train + serve,
            "form_chosen_on": ("the form (a/P + b/BW + c, a >= FLOPs) was chosen on the Lambda DLE PyTorch families "
                               "of ResNet-50 and BERT-Large (TF32 and FP16); every error here holds the target's die "
                               "out of the fit, and the hold-out ratios come from other publishers")})
