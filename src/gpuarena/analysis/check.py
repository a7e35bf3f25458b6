"""Is a published figure physically possible, judged as stated?

Every verdict comes from analysis.physics, the roofline every verb asks: the claim's
per-GPU throughput at its conditions (batch, sequence length, image size, diffusion steps),
with the precision judged as the arithmetic actually ran on that GPU generation
(analysis.precision: FP32 tensors on an A100 run ResNet-50's convolutions in TF32, BERT's
matmuls in IEEE FP32; a V100 has no TF32).  Verdicts:

- impossible: above the peak of that precision (the reason names the one it would need);
- implausible: above the best attainment of the roofline credibly reached on that workload,
  precision class and architecture generation (physics.ceiling, with its source);
- plausible: otherwise.

A multi-GPU scaling coefficient above 1 is impossible; below the interconnect model's
no-overlap floor it is still plausible (data loading, stragglers and launch gaps lose more
than the wire), and the reason says how much the interconnect alone explains.

A micro-benchmark's figure (a matmul's TFLOP/s, a copy's or a host link's GB/s, an all-reduce's bus
bandwidth) is judged by analysis/micro_check.py against the catalog's bound for it.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path  # noqa: F401 - tests locate the shipped claims through it

from gpuarena.analysis import physics as X
from gpuarena.analysis.physics import claim_number as _num
from gpuarena.analysis import precision as P
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry

NAMES = P.NAMES


def check_claim(claim: dict, store=None) -> dict:
    """One claim {gpu, workload, precision, batch_size, throughput | latency[, seq_len, image_size, steps,
    gpus, scaling, source]} -> verdict row with every assumption (see COLUMNS and the JSON output).

    A loosely named GPU that fits several catalog cards ("H100": SXM5 and PCIe) is judged on each; when
    every variant gives the same verdict that is the answer (the row says it held for all of them),
    otherwise the ambiguity is refused with each variant's verdict."""
    cands = catalog.candidates(claim.get("gpu") or "")
    if len(cands) > 1:
        names = ", ".join(g.short for g in cands)
        rows, refused = [], []
        for g in cands:
            try:
                rows.append(_check_one({**claim, "gpu": g.name}, store))
            except UserError as e:
                refused.append(f"{g.short}: {e}")
        if refused:
            raise UserError(f"GPU {claim['gpu']!r} is ambiguous ({names}) and cannot be judged on every one "
                            f"({'; '.join(refused)}); name one")
        verdicts = {r["verdict"] for r in rows}
        if len(verdicts) == 1:
            worst = rows[0]
            return {**worst, "reason": f"{claim['gpu']} names {names}: {worst['verdict']} on every one; "
                                       f"{worst['reason']}", "judged_on": [g.name for g in cands]}
        raise UserError(f"GPU {claim['gpu']!r} is ambiguous and the verdict depends on which: "
                        + "; ".join(f"{r['gpu']}: {r['verdict']}" for r in rows) + "; name one")
    return _check_one(claim, store)


def _check_one(claim: dict, store=None) -> dict:
    physics = registry.fact(claim.get("workload"), "physics")
    if physics in ("serving", "decoder-training"):   # the serving model; MFU of a training claim
        from gpuarena.analysis.llm_claims import check_serving, check_training

        return (check_serving if physics == "serving" else check_training)(claim, store)
    if registry.fact(claim.get("workload"), "device_figure"):   # a matmul's TFLOP/s, a copy's GB/s, a busbw
        from gpuarena.analysis.micro_check import check_micro

        return check_micro(claim, store)
    g = catalog.match(claim["gpu"])
    workload = claim["workload"]
    request = P.request_of(claim["precision"])
    if claim.get("batch_size") in (None, ""):
        raise UserError(f"claim {claim.get('gpu')} {workload}: give its batch size")
    params = X.workload_params(workload, claim)
    thr, lat = _num(claim, "throughput"), _num(claim, "latency")
    n = X.claim_gpus(claim)
    scaling = _num(claim, "scaling")
    if thr is not None and lat is not None:
        raise UserError(f"claim {claim.get('gpu')} {workload}: give a throughput or a latency, not both")
    if lat is not None:
        thr = 1 / lat           # seconds per item, whatever the batch (the batch sets the conditions)
    if thr is None and scaling is None:
        raise UserError(f"claim {claim.get('gpu')} {workload}: give a throughput, a latency or a scaling coefficient")
    arch = P.arch_of(g)
    if scaling is None:
        lim = X.limit(workload, g, request, params, store)
        prec, fpi = lim.roof.executed, lim.roof.flops
    else:
        prec = P.peak_precision(workload, request, arch)
        fpi = _workload_flops(workload, params)
    row = {"gpu": g.name, "workload": workload, "precision": claim["precision"], "executed": prec,
           "executed_as": P.describe(workload, request, arch), "batch_size": params["batch_size"],
           "params": params, "gpus": n, "throughput": thr, "latency": lat, "scaling": scaling,
           "flops_per_item": fpi, "source": claim.get("source", "")}
    if scaling is not None:
        return {**row, **_judge_scaling(workload, g, n, scaling, thr, params["batch_size"], store)}
    per_gpu = thr / n
    v, reason = X.judge(lim, per_gpu)
    reason += f"; executed as {row['executed_as']}"
    implied = per_gpu * fpi / 1e12
    if implied > lim.roof.peak_tflops and P.would_need(implied, g, prec).startswith("would need"):
        reason += f"; {P.would_need(implied, g, prec)}"    # only a claim above its precision's peak needs another
    c = lim.ceiling
    ceil = None if c is None else {"attainment": c.best.attainment, "share": c.best.share_of_peak,
                                   "gpu": c.best.gpu, "generation": c.best.generation, "borrowed": c.borrowed,
                                   "engine": c.best.engine, "source": c.best.source}
    return {**row, "verdict": v, "implied_tflops": implied, "peak_tflops": lim.roof.peak_tflops,
            "share_of_peak": lim.roof.share_of_peak(per_gpu), "attainment": lim.roof.attainment(per_gpu),
            "bound_by": lim.roof.bound_by, "credible_max": lim.credible, "ceiling": ceil, "reason": reason}


def _workload_flops(workload: str, params: dict) -> float:
    from gpuarena.workloads import registry

    return float(registry.get(workload).flops(params) or 0.0)


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
    comm, compute = p["rows"][0]["comm_s"], p["compute_s"]
    high = compute / max(compute, comm)     # perfect overlap still waits for the wire when it is slower
    if scaling > 1 * (1 + 1e-9):
        v, why = "impossible", f"a coefficient above 1 is faster than linear; {base}"
    elif scaling > high * (1 + 0.02):
        v, why = "implausible", (f"even with the all-reduce fully hidden behind compute the step waits "
                                 f"{comm * 1e3:.1f} ms for the wire: at most {high:.3f}; {base}")
    elif scaling < low * (1 - 0.02):
        v, why = "plausible", (f"below the {low:.3f} the interconnect alone explains with no overlap at all: "
                               f"other losses (input pipeline, stragglers, launch gaps) make up the rest; {base}")
    else:
        v, why = "plausible", f"between the no-overlap {low:.3f} and the full-overlap {high:.3f}; {base}"
    return {"verdict": v, "predicted_min_scaling": low, "predicted_max_scaling": high, "implied_tflops": None, "peak_tflops": None,
            "share_of_peak": None, "ceiling": None, "reason": why}


def check_claims(claims: list[dict], store=None) -> list[dict]:
    """check_claim over many claims (all validated before any output)."""
    return [check_claim(c, store) for c in claims]


REQUIRED = ("gpu", "workload", "precision", "batch_size")
OPTIONAL = ("throughput", "latency", "seq_len", "image_size", "steps", "gpus", "scaling", "model", "prompt_len",
            "new_tokens", "source", "replicas", "ttft", "vs", "ratio")
# model, prompt_len, new_tokens: LLM claims (llm_claims.py); replicas, ttft, vs, ratio: serving (serving_claims.py)
MAX_CSV = 8 << 20


def read_claims(path: str) -> list[dict]:
    from gpuarena.safeio import read_text

    text = read_text(path, f"--csv {path}", MAX_CSV, encoding="utf-8-sig")
    with io.StringIO(text, newline="") as f:
        reader = csv.DictReader(f)
        try:
            reader.fieldnames = cols = _columns(path, reader.fieldnames or [])
            missing = [c for c in REQUIRED if c not in cols]
            if missing or not ({"throughput", "latency", "scaling", "ttft", "ratio"} & set(cols)):
                raise UserError(f"--csv {path}: missing column(s) {', '.join(missing) or 'throughput/latency/scaling'}"
                                f"; need {','.join(REQUIRED)} and one of throughput, latency, scaling (llm-serve: "
                                "or ttft, or vs and ratio)")
            rows = [dict(r) for r in reader]
        except csv.Error as exc:
            raise UserError(f"--csv {path}: not a CSV file ({str(exc)[:200]})") from None
    extra = next((i for i, r in enumerate(rows, 2) if None in r), None)
    if extra:
        raise UserError(f"--csv {path}: row {extra} has more fields than the header names")
    if not rows:
        raise UserError(f"--csv {path}: no claims")
    return rows


def _columns(path: str, header: list[str]) -> list[str]:
    """The header as check reads it: 'Seq-Len' or 'batch size' is seq_len or batch_size; a misspelt known
    column ('seqlen') is refused, since dropping it would judge the claim at a default; others are notes."""
    import difflib
    import re

    known = REQUIRED + OPTIONAL
    out = []
    for name in header:
        norm = re.sub(r"[\s-]+", "_", (name or "").strip().lower())
        close = difflib.get_close_matches(norm, known, n=1, cutoff=0.8)
        if norm not in known and close:
            raise UserError(f"--csv {path}: column {name!r} is not one check reads; did you mean {close[0]}?")
        out.append(norm if norm in known else name)
    return out
