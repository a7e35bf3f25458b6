"""Is a published figure physically possible?

implied FLOP/s = throughput x FLOPs per item (from the workload class itself);
share = implied / the GPU's dense peak for the claimed precision.  Verdicts:

- impossible: above the GPU's peak at every precision it has;
- implausible: above the peak of the claimed precision (the reason names the
  precisions under which it would fit), or above SUSTAINED_CEILING of it;
- plausible: otherwise.

SUSTAINED_CEILING: whole training/inference steps reach well under peak
(torchtitan and nanoGPT report MFU of 40-60% on A100/H100); 80% of peak is
allowed before a claim is called implausible.  Where gpuarena has measured the
workload on a catalog GPU, the best measured share of peak is reported beside
the claim.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from gpuarena.analysis.rows import gpu_of, is_search
from gpuarena.analysis.tables import render as _render
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry

SUSTAINED_CEILING = 0.8
ORDER = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8")
NAMES = {"fp32": "FP32", "tf32": "TF32", "bf16": "BF16", "fp16": "FP16", "fp8": "FP8", "int8": "INT8"}


def flops_per_item(workload: str, batch_size: int) -> float:
    """FLOPs per item from the workload class (a pure function of its params)."""
    wl = registry.get(workload)
    f = wl.flops(wl.resolve_params({"batch_size": batch_size}))
    if not f:
        raise UserError(f"workload {workload!r} has no FLOP count, so its claims cannot be checked")
    return float(f)


def measured_efficiencies(store, workload: str) -> dict[str, dict]:
    """Best share of peak gpuarena measured for a workload, per precision, on catalog GPUs:
    {precision: {share, gpu, precision, tflops, flops_per_item, unit, params}}."""
    if store is None:
        return {}
    best: dict[str, dict] = {}
    for r in store.results(workload=workload, status="ok"):
        if r.get("source") == "published" or not r.get("tflops") or is_search(r):
            continue
        g = catalog.find(gpu_of(r))
        prec = r.get("precision") or "default"
        try:
            peak = g.peak(prec) if g else None
        except UserError:
            peak = None
        if not peak:
            continue
        share = r["tflops"] / (r.get("gpus") or 1) / peak
        if prec == "default" and share > 1 and g.peak("tf32"):
            # PyTorch's defaults run cuDNN convolutions in TF32: above the FP32 peak means TF32 ran
            prec, share = "tf32", r["tflops"] / (r.get("gpus") or 1) / g.peak("tf32")
        if prec not in best or share > best[prec]["share"]:
            best[prec] = {"share": share, "gpu": g.name, "precision": prec, "tflops": r["tflops"],
                          "flops_per_item": r.get("flops_per_item"), "unit": r.get("unit"),
                          "params": r.get("params") or {}}
    return best


def measured_efficiency(store, workload: str) -> dict | None:
    """Best share of peak gpuarena measured for a workload on a catalog GPU: {share, gpu, precision, tflops}."""
    effs = measured_efficiencies(store, workload)
    return max(effs.values(), key=lambda e: e["share"]) if effs else None


def check_claim(claim: dict, store=None, _fpi_cache: dict | None = None) -> dict:
    """One claim {gpu, workload, precision, batch_size, throughput[, source]} -> verdict row.

    Returns {gpu, workload, precision, batch_size, throughput, source, verdict, implied_tflops,
             peak_tflops, share_of_peak, shares: {precision: share}, fits: [precisions within ceiling],
             measured_share, measured_on, reason}.
    """
    g = catalog.match(claim["gpu"])
    prec = catalog.norm_precision(claim["precision"])
    try:
        bs, thr = int(claim["batch_size"]), float(claim["throughput"])
    except (TypeError, ValueError):
        raise UserError(f"claim {claim}: batch_size must be an integer and throughput a number") from None
    if bs < 1 or not math.isfinite(thr) or thr <= 0:
        raise UserError(f"claim {claim}: batch_size must be >= 1 and throughput a positive number")
    key = (claim["workload"], bs)
    cache = _fpi_cache if _fpi_cache is not None else {}
    if key not in cache:
        cache[key] = flops_per_item(claim["workload"], bs)
    implied = thr * cache[key] / 1e12
    peak = g.peak(prec)
    if not peak:
        raise UserError(f"{g.name} has no {prec} peak in the catalog; it has: {', '.join(g.peaks)}")
    shares = {p: implied / g.peaks[p] for p in ORDER if p in g.peaks and p != "int8"}
    share = implied / peak
    fits = [p for p, s in shares.items() if s <= SUSTAINED_CEILING]
    gpu = g.short
    head = f"implies {implied:.0f} TFLOP/s, {share:.1f}x the {gpu}'s {NAMES[prec]} peak ({peak:g})" if share >= 1 \
        else f"implies {implied:.1f} TFLOP/s, {share:.0%} of the {gpu}'s {NAMES[prec]} peak ({peak:g})"
    if all(s > 1 for s in shares.values()):
        v, reason = "impossible", f"{head}; above its peak at every precision"
    elif share > 1:
        v = "implausible"
        reason = f"{head}; plausible only with {' or '.join(NAMES[p] for p in fits) or 'a lower precision'}"
        if prec == "fp32" and "tf32" in fits:
            reason += (" (cuDNN convolutions default to TF32 on Ampere and newer)" if registry.get(claim["workload"]).dominant_op == "conv"
                       else " (PyTorch's default FP32 matmul does not use TF32)")
    elif share > SUSTAINED_CEILING:
        v, reason = "implausible", f"{head}; above the {SUSTAINED_CEILING:.0%} of peak that whole steps sustain"
    else:
        v, reason = "plausible", head
    me = measured_efficiency(store, claim["workload"])
    if me:
        reason += f"; gpuarena measured {me['share']:.0%} of peak ({me['precision']}) on {me['gpu']}"
    return {"gpu": g.name, "workload": claim["workload"], "precision": prec, "batch_size": bs, "throughput": thr,
            "source": claim.get("source", ""), "verdict": v, "implied_tflops": implied, "peak_tflops": peak,
            "share_of_peak": share, "shares": shares, "fits": fits,
            "measured_share": me["share"] if me else None, "measured_on": me["gpu"] if me else None,
            "reason": reason}


def check_claims(claims: list[dict], store=None) -> list[dict]:
    """check_claim over many claims (all validated before any output)."""
    cache: dict = {}
    return [check_claim(c, store, cache) for c in claims]


REQUIRED = ("gpu", "workload", "precision", "batch_size", "throughput")
MAX_CSV = 8 << 20


def read_claims(path: str) -> list[dict]:
    p = Path(path)
    if not p.is_file():
        raise UserError(f"--csv {path}: no such file")
    if p.stat().st_size > MAX_CSV:
        raise UserError(f"--csv {path}: larger than {MAX_CSV} bytes")
    with open(p, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise UserError(f"--csv {path}: missing column(s) {', '.join(missing)}; need {','.join(REQUIRED)}")
        rows = [dict(r) for r in reader]
    if not rows:
        raise UserError(f"--csv {path}: no claims")
    return rows


COLUMNS = [("gpu", "GPU"), ("workload", "workload"), ("precision", "precision"), ("batch_size", "batch"),
           ("throughput", "claimed items/s"), ("implied_tflops", "implied TFLOP/s"), ("peak_tflops", "peak"),
           ("share", "share of peak"), ("verdict", "verdict"), ("reason", "reason")]


def render(rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return _render([], rows, "json")
    shown = [{**r, "share": f"{r['share_of_peak']:.0%}", "gpu": r["gpu"].replace("NVIDIA ", "")} for r in rows]
    return _render(COLUMNS, shown, fmt, title="Claims checked against peak FLOP/s")
