"""Ratio claims ("the A800 reaches 87.8% of the A100"), judged against what the specs allow.

One GPU: the ratio of two cards' throughput on one workload lies between the
ratio of their memory bandwidths and the ratio of the peaks they sustain at the
executed precision under their power limits (analysis/power.py; a step is some
mix of compute-bound and memory-bound work), widened by the run-to-run spread.
Cards of identical single-GPU silicon (same architecture, peaks, memory
bandwidth and power limit: the A800 is an A100 with NVLink cut; the A100 PCIe is
not an A100 SXM4) must give 1.00 within that spread.

Several GPUs: the all-reduce time ratio is the inverse bus-bandwidth ratio,
and the step-time ratio comes from the interconnect model (analysis.whatif)
run for both cards.

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

from gpuarena.analysis import power
from gpuarena.analysis import precision as P
from gpuarena.data import catalog
from gpuarena.errors import UserError

from gpuarena.analysis.physics import DEFAULT_SPREAD, DEFAULT_SPREAD_SOURCE, spread  # noqa: F401  (one spread)


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
    verdict = "plausible" if ratio <= hi and high >= lo else "implausible"
    claimed = f"{ratio:.3f}" if high == ratio else f"{ratio:.3f}-{high:.3f}"
    reason = (f"claimed {claimed}; expected {basis}, widened by the run-to-run spread {s:.1%} "
              f"({s_from}): {lo:.3f}-{hi:.3f}")
    return {"kind": "single-GPU throughput ratio", "workload": workload, "gpu": a.name, "vs": b.name,
            "precision": precision, "executed": pa, "claimed": ratio, "claimed_high": high, "peak_ratio": peak_r,
            "bandwidth_ratio": bw_r, "identical_silicon": same, "spread": s, "spread_from": s_from,
            "expected_low": lo, "expected_high": hi, "verdict": verdict, "reason": reason}


def check_multi_gpu_ratio(workload: str, gpu: str, vs: str, n: int, claimed_low: float, claimed_high: float,
                          what: str, throughput: float | None = None, batch_size: int | None = None,
                          store=None) -> dict:
    """A claimed slowdown range of gpu against vs at n GPUs, as a ratio of times (1.4-1.6 = +40-60%).

    what="allreduce": the gradient all-reduce; what="step": the whole training step (needs the
    single-GPU throughput and batch the model starts from)."""
    from gpuarena.analysis import whatif

    if not (0 < claimed_low <= claimed_high) or n < 2:
        raise UserError("a multi-GPU ratio needs 0 < low <= high and at least 2 GPUs")
    a, b = catalog.match(gpu), catalog.match(vs)
    kw = {"busbw": None, "overlap": 0.0, "throughput": throughput, "batch_size": batch_size}
    if throughput is None or batch_size is None:
        raise UserError("a multi-GPU ratio needs the single-GPU throughput and batch size it starts from")
    pa = whatif.predict(workload, a.name, [n], store, **kw)
    pb = whatif.predict(workload, b.name, [n], store, **kw)
    key = "comm_s" if what == "allreduce" else "step_s"
    model = pa["rows"][0][key] / pb["rows"][0][key]
    s, s_from = _spread(store, workload)
    verdict = "plausible" if claimed_low / (1 + s) <= model <= claimed_high * (1 + s) else "implausible"
    return {"kind": f"{n}-GPU {what} time ratio", "workload": workload, "gpu": a.name, "vs": b.name, "n": n,
            "claimed_low": claimed_low, "claimed_high": claimed_high, "modelled": model, "verdict": verdict,
            "spread": s, "reason": (f"model gives {model:.2f}x ({a.short} busbw {pa['busbw_gbs']:.0f} GB/s, "
                                    f"{b.short} {pb['busbw_gbs']:.0f} GB/s; no overlap; compute "
                                    f"{pb['compute_s'] * 1e3:.0f} ms per step from {throughput:g} items/s at batch "
                                    f"{batch_size})")}
