"""Ratio claims ("the A800 reaches 87.8% of the A100"), judged against what the specs allow.

One GPU: the ratio of two cards' throughput on one workload lies between the
ratio of their memory bandwidths and the ratio of the peaks they sustain at the
executed precision under their power limits (analysis/rows/power.py; a step is some
mix of compute-bound and memory-bound work), widened by the run-to-run spread.
Cards of identical single-GPU silicon (same architecture, peaks, memory
bandwidth and power limit: the A800 is an A100 with NVLink cut; the A100 PCIe is
not an A100 SXM4) must give 1.00 within that spread.

Several GPUs: the all-reduce time ratio is the inverse bus-bandwidth ratio, judged against a band
built from each card's credible busbw range (busbw_band): from the lowest to the highest share of
its link per direction that well-run NCCL all-reduces of its generation reach (data/micro_ceilings.csv,
measured results; ring and, where the NVSwitch reduces, NVLink SHARP), and the catalog model's, widened
by the card-to-card spread.  A point estimate (the catalog model's) would call a ring-against-NVLS
comparison, or one card's published busbw, wrong.  The step-time ratio comes from the interconnect
model (analysis.whatif) run for both cards at the ends of those ranges.

The spread is the median, over the cases of the workload measured in more than
one run of this database (finite results only), of the relative difference
between their fastest and slowest run; without such cases,
DEFAULT_SPREAD, from the project's own H200 sessions: bert-large-infer tf32
516.3 vs 503.9 sequences/s (docs/data/h200-s3/-s4-2026-11-29.json), 2.5% of the slower.
A database's spread never narrows the tolerance below DEFAULT_SPREAD: a ratio sets
two cards in two servers against each other, which differ by more than one card run
twice (the shipped bundles hold one eager ResNet-50 case measured twice, 0.5%).
"""

from __future__ import annotations

from gpuarena.analysis.physics import interconnect as I
from gpuarena.analysis.physics import micro_check as MC
from gpuarena.analysis.rows import power
from gpuarena.analysis.rows import precision as P
from gpuarena.data import catalog
from gpuarena.errors import UserError

from gpuarena.analysis.physics.credible import DEFAULT_SPREAD, DEFAULT_SPREAD_SOURCE, spread
from gpuarena.analysis.rows.verdict import ClaimVerdict as V


def parse_range(text: str) -> tuple[float, float]:
    """'0.878' -> (0.878, 0.878); '1.4-1.6' -> (1.4, 1.6); anything else, NaN, 0 or negative: UserError."""
    import math

    parts = str(text).strip().split("-")
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        raise UserError(f"--ratio {text!r}: a number or a range like 1.4-1.6") from None
    if len(vals) not in (1, 2) or not all(math.isfinite(v) and v > 0 for v in vals) or vals[0] > vals[-1]:
        raise UserError(f"--ratio {text!r}: positive finite number(s), low-high")
    return vals[0], vals[-1]


def _spread(store, workload: str) -> tuple[float, str]:
    """The run-to-run spread of the database, at least DEFAULT_SPREAD (see the module's docstring)."""
    s, s_from = spread(store, workload)
    if s >= DEFAULT_SPREAD:
        return s, s_from
    return DEFAULT_SPREAD, (f"{DEFAULT_SPREAD_SOURCE}; the least a ratio of two cards allows, above the "
                            f"{s:.1%} of this database: {s_from}")


def identical_silicon(a: catalog.GPU, b: catalog.GPU) -> bool:
    """Same die, SMs, memory bandwidth, every deep-learning peak (FP64 aside: the H800 is an H100 with
    FP64 and NVLink cut, the A800 an A100 with NVLink cut) and power limit (the A100 40GB PCIe has the
    SXM4's die, peaks and bandwidth at 250 W against 400 W, and cannot hold its clock)."""
    def dl(g):
        return {k: v for k, v in g.peaks.items() if k != "fp64"}
    return (a.architecture == b.architecture and dl(a) == dl(b) and a.tdp_w == b.tdp_w
            and a.memory_bandwidth_gbs == b.memory_bandwidth_gbs and a.sm_count == b.sm_count)


def check_ratio(workload: str, gpu: str, vs: str, ratio: float, precision: str = "default",
                store=None, ratio_high: float | None = None) -> dict:
    """A claimed throughput ratio gpu / vs on one GPU each (or a range ratio..ratio_high, as in "the gap is
    below 5%") -> {verdict, expected_low, expected_high, ...}: plausible when the claim meets the range."""
    high = ratio if ratio_high is None else ratio_high
    if not (0 < ratio <= high < 1e6):
        raise UserError(f"--ratio {ratio}: must be a positive number (a range low-high)")
    a, b = catalog.match(gpu), catalog.match(vs)
    req = P.request_of(precision)
    pa, pb = (P.peak_precision(workload, req, P.arch_of(g)) for g in (a, b))
    if not (a.peaks.get(pa) and b.peaks.get(pb)):
        raise UserError(f"no {pa}/{pb} peak for {a.short} / {b.short}")
    peak_r = power.sustained_peak(a, pa) / power.sustained_peak(b, pb)
    bw_r = a.memory_bandwidth_gbs / b.memory_bandwidth_gbs
    s, s_from = _spread(store, workload)
    lo, hi = min(peak_r, bw_r) / (1 + s), max(peak_r, bw_r) * (1 + s)
    same = identical_silicon(a, b)
    basis = (f"identical single-GPU silicon ({a.short} and {b.short}: same peaks, memory bandwidth, SMs and "
             "power limit), "
             "so 1.00" if same else
             f"between the memory-bandwidth ratio {bw_r:.2f} and the {P.NAMES[pa]} peak ratio {peak_r:.2f}"
             + (" (peaks as sustained under each card's power limit)"
                if power.sustained_fraction(a) != power.sustained_fraction(b) else ""))
    verdict = V.PLAUSIBLE if ratio <= hi and high >= lo else V.IMPLAUSIBLE
    claimed = f"{ratio:.3f}" if high == ratio else f"{ratio:.3f}-{high:.3f}"
    reason = (f"claimed {claimed}; expected {basis}, widened by the run-to-run spread {s:.1%} "
              f"({s_from}): {lo:.3f}-{hi:.3f}")
    return {"kind": "single-GPU throughput ratio", "workload": workload, "gpu": a.name, "vs": b.name,
            "precision": precision, "executed": pa, "claimed": ratio, "claimed_high": high, "peak_ratio": peak_r,
            "bandwidth_ratio": bw_r, "identical_silicon": same, "spread": s, "spread_from": s_from,
            "expected_low": lo, "expected_high": hi, "verdict": verdict, "reason": reason}


def busbw_band(g: catalog.GPU, n: int, store=None) -> tuple[float, float, str]:
    """(low, high, what) GB/s: the all-reduce busbw n of these cards credibly reach (module docstring)."""
    gen, regimes = P.arch_of(g), ("ring", "nvls") if MC.nvls(g, n) else ("ring",)
    plateau: dict = {}     # a measured curve's large-message plateau: small messages measure latency
    for e in MC.measured_evidence(store, "allreduce-busbw"):
        key = (e.gpu, e.gpus, e.regime)
        plateau[key] = max(plateau.get(key, e), e, key=lambda x: x.value)
    pool = [e for e in list(MC.published_evidence()) + list(plateau.values())
            if e.figure == "allreduce-busbw" and e.regime in regimes
            and I.is_pcie_card(catalog.match(e.gpu)) == I.is_pcie_card(g)]
    here = [e for e in pool if e.generation == gen]
    borrowed = "" if here else f"no {gen.capitalize()} evidence, so every generation's: "
    here = here or pool
    base, bound = MC.base("allreduce-busbw", g, "", n), MC.bound("allreduce-busbw", g, "", n)[0]
    model = I.catalog_busbw(g, n)[0] / base
    shares = [e.share for e in here] + [model]
    s = MC.MICRO_SPREAD
    low, high = min(shares) * base / (1 + s), min(bound, max(shares) * base * (1 + s))
    src = ", ".join(sorted({f"{e.value:g} on {catalog.match(e.gpu).short} x{e.gpus} ({e.regime})" for e in here}))
    return low, high, (f"{g.short} {low:.0f}-{high:.0f} GB/s ({min(shares):.0%}-{max(shares):.0%} of its "
                       f"{base:g} GB/s link per direction: {borrowed}{src or 'no evidence'}, and the model's "
                       f"{model:.0%}; +-{s:.0%} card to card)")


def check_multi_gpu_ratio(workload: str, gpu: str, vs: str, n: int, claimed_low: float, claimed_high: float,
                          what: str, throughput: float | None = None, batch_size: int | None = None,
                          store=None) -> dict:
    """A claimed slowdown range of gpu against vs at n GPUs, as a ratio of times (1.4-1.6 = +40-60%).

    what="allreduce": the gradient all-reduce (busbw_band on both sides); what="step": the whole training
    step (needs the single-GPU throughput and batch the model starts from)."""
    from gpuarena.analysis.physics import whatif

    if not (0 < claimed_low <= claimed_high) or n < 2:
        raise UserError("a multi-GPU ratio needs 0 < low <= high and at least 2 GPUs")
    a, b = catalog.match(gpu), catalog.match(vs)
    (la, ha, ta), (lb, hb, tb) = busbw_band(a, n, store), busbw_band(b, n, store)
    s, s_from = _spread(store, workload)
    pb = None
    if what == "allreduce":     # the time ratio is the inverse busbw ratio, at each end of both ranges
        model, lo, hi = I.catalog_busbw(b, n)[0] / I.catalog_busbw(a, n)[0], lb / ha, hb / la
    else:
        if throughput is None or batch_size is None:
            raise UserError("a multi-GPU step-time ratio needs the single-GPU throughput and batch size it starts from")

        def step(g, bw):
            return whatif.predict(workload, g.name, [n], store, bw, 0.0, batch_size, throughput)

        pb = step(b, None)
        model = step(a, None).rows[0].step_s / pb.rows[0].step_s
        lo = step(a, ha).rows[0].step_s / step(b, lb).rows[0].step_s / (1 + s)
        hi = step(a, la).rows[0].step_s / step(b, hb).rows[0].step_s * (1 + s)
    verdict = V.PLAUSIBLE if claimed_low <= hi and claimed_high >= lo else V.IMPLAUSIBLE
    compute = (f"; compute {pb.compute_s * 1e3:.0f} ms per step from {throughput:g} items/s at batch "
               f"{batch_size}, no overlap") if pb else ""
    return {"kind": f"{n}-GPU {what} time ratio", "workload": workload, "gpu": a.name, "vs": b.name, "n": n,
            "claimed_low": claimed_low, "claimed_high": claimed_high, "modelled": model, "expected_low": lo,
            "expected_high": hi, "verdict": verdict, "spread": s, "spread_from": s_from,
            "reason": (f"time ratio {lo:.2f}-{hi:.2f}x from each card's credible all-reduce busbw: {ta}; {tb}; "
                       f"the catalog model's point {model:.2f}x{compute}")}


def allreduce_ratio_row(claim: dict, store=None) -> dict:
    """An all-reduce ratio claim in `check --csv` (columns vs and ratio: gpu's busbw over vs's, the
    throughput ratio as for every ratio claim there; its time ratio is the inverse) as a row of check's table."""
    n = int(float(claim.get("gpus") or 0))
    if claim.get("vs") in (None, "") or claim.get("ratio") in (None, "") or n < 2:
        raise UserError("an all-reduce ratio claim needs vs (the second GPU), ratio (gpu's busbw over vs's) and gpus")
    lo, hi = parse_range(claim["ratio"])
    r = check_multi_gpu_ratio(claim["workload"], claim["gpu"], claim["vs"], n, 1 / hi, 1 / lo, "allreduce", store=store)
    return {**r, "precision": "n/a", "executed": "n/a", "batch_size": None, "params": {}, "gpus": n,
            "throughput": None, "latency": None, "scaling": None, "implied_tflops": None, "peak_tflops": None,
            "share_of_peak": None, "ceiling": None, "source": claim.get("source", ""),
            "claim_text": f"busbw {claim['ratio']}x the {catalog.match(claim['vs']).short}'s "
                          f"(all-reduce time {1 / hi:.2f}" + ("" if hi == lo else f"-{1 / lo:.2f}") + "x)"}
