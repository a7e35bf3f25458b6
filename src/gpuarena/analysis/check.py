"""Is a published figure physically possible, judged as stated?

implied FLOP/s = per-GPU throughput x FLOPs per item at the claim's conditions
(batch, sequence length, image size, diffusion steps); the precision it is
judged at is the one the claim's arithmetic actually ran as on that GPU
generation (analysis.precision: FP32 tensors on an A100 run ResNet-50's
convolutions in TF32, BERT's matmuls in IEEE FP32; a V100 has no TF32).
Verdicts:

- impossible: above that precision's peak, whatever other precisions the card
  has (the reason names the one it would need);
- implausible: above the best share of peak anyone has credibly reached on
  that workload at that precision (analysis.ceilings, with its source);
- plausible: otherwise.

A multi-GPU scaling coefficient is judged by the interconnect model
(analysis.whatif): the no-overlap prediction is the lowest coefficient the
interconnect can explain.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path  # noqa: F401 - tests locate the shipped claims through it

from gpuarena.analysis import ceilings as C
from gpuarena.analysis import precision as P
from gpuarena.analysis.tables import render as _render
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.safeio import MIN_MAGNITUDE

ORDER = ("fp32", "tf32", "bf16", "fp16", "fp8")
NAMES = P.NAMES


def _num(claim: dict, key: str, positive: bool = True) -> float | None:
    v = claim.get(key)
    if v in (None, ""):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise UserError(f"claim {key} {v!r}: not a number") from None
    if not math.isfinite(x) or (positive and x <= 0) or (x != 0 and abs(x) < MIN_MAGNITUDE):
        raise UserError(f"claim {key} {v!r}: must be a finite positive number, at least {MIN_MAGNITUDE:g}")
    return x


def _would_need(implied: float, g: catalog.GPU, prec: str) -> str:
    above = [p for p in ORDER if g.peaks.get(p) and ORDER.index(p) > ORDER.index(prec) and implied <= g.peaks[p]]
    if not above:
        return "above the card's peak at every precision it has"
    p = above[0]
    same = [q for q in above if g.peaks[q] == g.peaks[p]]     # BF16 and FP16 share their tensor-core rate
    unit = "tensor cores" if p != "fp32" else "CUDA cores"
    return f"would need {' or '.join(NAMES[q] for q in same)} {unit} ({g.peaks[p]:g} TFLOP/s)"


def check_claim(claim: dict, store=None) -> dict:
    """One claim {gpu, workload, precision, batch_size, throughput | latency[, seq_len, image_size, steps,
    gpus, scaling, source]} -> verdict row with every assumption (see COLUMNS and the JSON output)."""
    g = catalog.match(claim["gpu"])
    workload = claim["workload"]
    request = P.request_of(claim["precision"])
    if claim.get("batch_size") in (None, ""):
        raise UserError(f"claim {claim.get('gpu')} {workload}: give its batch size")
    params = C.workload_params(workload, claim)
    thr, lat = _num(claim, "throughput"), _num(claim, "latency")
    n = int(_num(claim, "gpus") or 1)
    scaling = _num(claim, "scaling")
    if thr is None and lat is not None:
        thr = params["batch_size"] / lat
    if thr is None and scaling is None:
        raise UserError(f"claim {claim.get('gpu')} {workload}: give a throughput, a latency or a scaling coefficient")
    arch = P.arch_of(g)
    prec = P.peak_precision(workload, request, arch)
    fpi = C.flops_per_item(workload, params)
    row = {"gpu": g.name, "workload": workload, "precision": claim["precision"], "executed": prec,
           "executed_as": P.describe(workload, request, arch), "batch_size": params["batch_size"],
           "params": params, "gpus": n, "throughput": thr, "latency": lat, "scaling": scaling,
           "flops_per_item": fpi, "source": claim.get("source", "")}
    if scaling is not None:
        return {**row, **_judge_scaling(workload, g, n, scaling, thr, params["batch_size"], store)}
    per_gpu = thr / n
    implied = per_gpu * fpi / 1e12
    peak = g.peaks.get(prec)
    if not peak:
        raise UserError(f"{g.name} has no {prec} peak in the catalog; it has: {', '.join(g.peaks)}")
    share = implied / peak
    head = (f"implies {implied:.0f} TFLOP/s per GPU, {share:.1f}x the {g.short}'s {NAMES[prec]} peak ({peak:g})"
            if share >= 1 else
            f"implies {implied:.1f} TFLOP/s per GPU, {share:.0%} of the {g.short}'s {NAMES[prec]} peak ({peak:g})")
    head += f"; executed as {row['executed_as']}"
    ceil = C.ceiling(workload, prec, store)
    if share > 1:
        v, reason = "impossible", f"{head}; above that peak: {_would_need(implied, g, prec)}"
    elif ceil is None:
        v, reason = "plausible", f"{head}; no credible ceiling known for {workload} at {NAMES[prec]}, so only the peak bounds it"
    elif share > ceil["share"] * (1 + 1e-6):
        v = "implausible"
        reason = (f"{head}; above the best {ceil['share']:.0%} of {NAMES[prec]} peak credibly reached on "
                  f"{workload} ({C.catalog.match(ceil['gpu']).short}, {ceil['engine']}: {ceil['source']})")
        if _would_need(implied, g, prec).startswith("would need"):
            reason += f"; {_would_need(implied, g, prec)}"
    else:
        v = "plausible"
        reason = f"{head}; within the best {ceil['share']:.0%} credibly reached ({ceil['source']})"
    return {**row, "verdict": v, "implied_tflops": implied, "peak_tflops": peak, "share_of_peak": share,
            "ceiling": ceil, "reason": reason}


def _judge_scaling(workload: str, g: catalog.GPU, n: int, scaling: float, thr: float | None, bs: int,
                   store) -> dict:
    from gpuarena.analysis import whatif

    if n < 2:
        raise UserError("a scaling coefficient needs --gpus of 2 or more")
    if thr is None:
        raise UserError("a scaling claim needs the single-GPU throughput it scales (--throughput)")
    p = whatif.predict(workload, g.name, [n], store, batch_size=bs, throughput=thr, overlap=0.0)
    low = p["rows"][0]["efficiency"]
    base = ("against the plain single-GPU step (the articles' linear coefficient); ring all-reduce of "
            f"{p['grad_bytes'] / 1e6:.0f} MB at {p['busbw_gbs']:.0f} GB/s ({p['busbw_from']}), "
            f"compute {p['compute_s'] * 1e3:.1f} ms per step")
    if scaling > 1:
        v, why = "impossible", f"a coefficient above 1 is faster than linear; {base}"
    elif scaling < low * (1 - 0.02):
        v, why = "implausible", (f"the interconnect alone still gives {low:.3f} with no overlap at all; "
                                 f"{scaling:.2f} needs another cause; {base}")
    else:
        v, why = "plausible", f"between the no-overlap {low:.3f} and 1; {base}"
    return {"verdict": v, "predicted_min_scaling": low, "implied_tflops": None, "peak_tflops": None,
            "share_of_peak": None, "ceiling": None, "reason": why}


def check_claims(claims: list[dict], store=None) -> list[dict]:
    """check_claim over many claims (all validated before any output)."""
    return [check_claim(c, store) for c in claims]


REQUIRED = ("gpu", "workload", "precision", "batch_size")
OPTIONAL = ("throughput", "latency", "seq_len", "image_size", "steps", "gpus", "scaling", "source")
MAX_CSV = 8 << 20


def read_claims(path: str) -> list[dict]:
    from gpuarena.safeio import read_text

    text = read_text(path, f"--csv {path}", MAX_CSV, encoding="utf-8-sig")
    with io.StringIO(text, newline="") as f:
        reader = csv.DictReader(f)
        cols = reader.fieldnames or []
        missing = [c for c in REQUIRED if c not in cols]
        if missing or not ({"throughput", "latency", "scaling"} & set(cols)):
            raise UserError(f"--csv {path}: missing column(s) {', '.join(missing) or 'throughput/latency/scaling'}; "
                            f"need {','.join(REQUIRED)} and one of throughput, latency, scaling")
        rows = [dict(r) for r in reader]
    if not rows:
        raise UserError(f"--csv {path}: no claims")
    return rows


COLUMNS = [("gpu", "GPU"), ("workload", "workload"), ("precision", "stated"), ("executed", "executed"),
           ("batch_size", "batch"), ("conditions", "conditions"), ("claim", "claimed"),
           ("implied_tflops", "implied TFLOP/s"), ("peak_tflops", "peak"), ("share", "share of peak"),
           ("verdict", "verdict"), ("reason", "reason")]


def _conditions(r: dict) -> str:
    p = r["params"]
    parts = [f"{k}={p[k]}" for k in ("seq_len", "image_size", "inference_steps") if k in p]
    return ", ".join(parts + ([f"gpus={r['gpus']}"] if r["gpus"] > 1 else []))


def _claim(r: dict) -> str:
    if r.get("scaling") is not None:
        return f"scaling {r['scaling']:.2f}"
    if r.get("latency") is not None:
        return f"{r['latency']:g} s/item"
    return f"{r['throughput']:,.1f}/s"


def render(rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return _render([], rows, "json")
    shown = [{**r, "share": f"{r['share_of_peak']:.0%}" if r.get("share_of_peak") is not None else "",
              "executed": NAMES.get(r["executed"], r["executed"]), "conditions": _conditions(r), "claim": _claim(r),
              "gpu": r["gpu"].replace("NVIDIA ", "")} for r in rows]
    return _render(COLUMNS, shown, fmt, title="Claims judged as stated (precision as executed)")
