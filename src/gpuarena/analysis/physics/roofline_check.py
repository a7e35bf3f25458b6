"""A claim judged by the roofline (analysis/physics/limits.py): a throughput or latency per GPU against the
peak and the credible shares, or a multi-GPU scaling coefficient against the interconnect model.  The
roofline physics' ``check`` (analysis/physics/models.py); analysis/verbs/check.py dispatches to it."""

from __future__ import annotations

from gpuarena.analysis.physics import limits as X
from gpuarena.analysis.physics.roofline import claim_gpus, workload_params
from gpuarena.analysis.rows import precision as P
from gpuarena.analysis.physics.roofline import claim_number as _num
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.analysis.rows.verdict import ClaimVerdict as V


def check_roofline(claim: dict, store=None) -> dict:
    """A claim judged by the roofline (analysis/physics/limits.py): a throughput or latency per GPU against the
    peak and the credible shares, or a scaling coefficient against the interconnect model."""
    g = catalog.match(claim["gpu"])
    workload = claim["workload"]
    request = P.request_of(claim["precision"])
    if claim.get("batch_size") in (None, ""):
        raise UserError(f"claim {claim.get('gpu')} {workload}: give its batch size")
    params = workload_params(workload, claim)
    thr, lat = _num(claim, "throughput"), _num(claim, "latency")
    n = claim_gpus(claim)
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
    b = lim.binding or lim.borrowed
    ceil = None if b is None else {"attainment": b.ceiling.best.attainment, "share": b.ceiling.best.share_of_peak,
                                   "side": b.side, "side_share": b.share, "allows": lim.allows(b),
                                   "gpu": b.ceiling.best.gpu, "generation": b.ceiling.best.generation,
                                   "borrowed": b.ceiling.borrowed, "engine": b.ceiling.best.engine,
                                   "tuned": b.tuned, "source": b.ceiling.best.source}
    return {**row, "verdict": v, "implied_tflops": implied, "peak_tflops": lim.roof.peak_tflops,
            "share_of_peak": lim.roof.share_of_peak(per_gpu), "attainment": lim.roof.attainment(per_gpu),
            "bound_by": lim.roof.bound_by, "credible_max": lim.credible, "ceiling": ceil,
            "unverified": lim.unverified(per_gpu) and v is V.PLAUSIBLE, "reason": reason}


def _workload_flops(workload: str, params: dict) -> float:
    from gpuarena.workloads import registry

    return float(registry.get(workload).flops(params) or 0.0)


def _judge_scaling(workload: str, g: catalog.GPU, n: int, scaling: float, thr: float | None, bs: int,
                   store) -> dict:
    from gpuarena.analysis.physics import whatif

    if n < 2:
        raise UserError("a scaling coefficient needs --gpus of 2 or more")
    if thr is None:
        raise UserError("a scaling claim needs the single-GPU throughput it scales (--throughput)")
    p = whatif.predict(workload, g.name, [n], store, batch_size=bs, throughput=thr, overlap=0.0)
    low = p.rows[0].efficiency
    base = ("against the plain single-GPU step (the articles' linear coefficient); ring all-reduce of "
            f"{p.grad_bytes / 1e6:.0f} MB at {p.busbw_gbs:.0f} GB/s ({p.busbw_from}), "
            f"compute {p.compute_s * 1e3:.1f} ms per step")
    comm, compute = p.rows[0].comm_s, p.compute_s
    high = compute / max(compute, comm)     # perfect overlap still waits for the wire when it is slower
    if scaling > 1 * (1 + 1e-9):
        v, why = V.IMPOSSIBLE, f"a coefficient above 1 is faster than linear; {base}"
    elif scaling > high * (1 + 0.02):
        v, why = V.IMPLAUSIBLE, (f"even with the all-reduce fully hidden behind compute the step waits "
                                 f"{comm * 1e3:.1f} ms for the wire: at most {high:.3f}; {base}")
    elif scaling < low * (1 - 0.02):
        v, why = V.PLAUSIBLE, (f"below the {low:.3f} the interconnect alone explains with no overlap at all: "
                               f"other losses (input pipeline, stragglers, launch gaps) make up the rest; {base}")
    else:
        v, why = V.PLAUSIBLE, f"between the no-overlap {low:.3f} and the full-overlap {high:.3f}; {base}"
    return {"verdict": v, "predicted_min_scaling": low, "predicted_max_scaling": high, "implied_tflops": None,
            "peak_tflops": None, "share_of_peak": None, "ceiling": None, "reason": why}
