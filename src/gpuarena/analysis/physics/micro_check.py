"""Micro-benchmark claims judged against the catalog's physics: a matmul's TFLOP/s, a device
copy's GB/s, a host link's GB/s, an all-reduce's bus bandwidth (the figures the ``matmul``,
``membw``, ``h2d``/``d2h`` and ``allreduce`` workloads measure).  The verdicts are check's:

- impossible: above the physical bound (the bound and its source are in the reason):
  matmul, the catalog's dense peak at that precision (a figure at twice it is a 2:4
  structured-sparsity figure quoted as dense, and the reason says so); membw, the catalog's
  memory bandwidth (a copy that fits in L2 measures the cache, not the memory); h2d/d2h, the
  raw rate per direction of the card's PCIe link, x16 after 128b/130b encoding
  (data/pcie_links.csv); allreduce, the per-direction NVLink rate (NVIDIA's figure counts both
  directions), x 2(n-1)/n where Hopper's NVSwitch reduces in the switch (NVLink SHARP) over
  more than two GPUs, or the PCIe link where PCIe carries it;
- implausible: above the best share of that bound credibly reached on the same figure and
  precision class on the same GPU generation (data/micro_ceilings.csv, every row sourced, and
  the finite measurements of the database, which raise a ceiling but never set one alone), a
  generation without evidence borrowing the best of any (said): the rule model claims follow
  (credible.ceiling_of), widened by MICRO_SPREAD.  An all-reduce's share is of the link per
  direction and its evidence is pooled by whether the switch reduces (8 H100s: ~480 GB/s with
  NVLink SHARP, ~370 without, nccl-tests issue #212);
- plausible: otherwise.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from gpuarena.analysis.physics import credible
from gpuarena.analysis.physics import interconnect as I
from gpuarena.analysis.rows import precision as P
from gpuarena.analysis.physics.roofline import claim_number, precision_class
from gpuarena.data import catalog, evidence
from gpuarena.errors import UserError
from gpuarena.safeio import finite
from gpuarena.store.result import MAX_THROUGHPUT
from gpuarena.workloads import registry
from gpuarena.analysis.rows.verdict import ClaimVerdict as V

# Cards of one model differ: "I have seen 5% and higher differences on an 8-gpu node" (github
# stas00/ml-engineering compute/accelerator/README.md, 'Not all accelerators are created equal').
MICRO_SPREAD = 0.05
SPARSE_MATCH = 0.02          # a figure within 2% of twice the dense peak is the sparse peak
UNITS = {"compute-peak": "TFLOP/s", "memory-bandwidth": "GB/s", "host-link": "GB/s", "allreduce-busbw": "GB/s"}
NOT_USED = ("batch_size", "latency", "scaling", "seq_len", "image_size", "steps", "ratio")


@dataclass(frozen=True)
class MicroEvidence:
    figure: str              # the workload's device_figure
    precision: str           # matmul's precision class, else ""
    gpu: str
    gpus: int
    value: float
    share: float             # of the bound on that GPU at that count
    engine: str
    source: str
    measured: bool = False
    regime: str = ""         # allreduce: "nvls" (reduced in the switch) or "ring" (the algorithm column); else ""

    @property
    def generation(self) -> str:
        return P.arch_of(catalog.match(self.gpu))


def _pcie(g: catalog.GPU) -> tuple[float, str]:
    gen, bw = I.pcie_link(g)
    return bw, f"the {g.short}'s PCIe gen{gen} x16 link per direction after 128b/130b encoding"


def bound(figure: str, g: catalog.GPU, prec: str = "", n: int = 1) -> tuple[float, str]:
    """(the physical bound of the figure on g, what it is)."""
    if figure == "compute-peak":
        if not g.peaks.get(prec):
            raise UserError(f"{g.short} has no {P.NAMES.get(prec, prec)} peak in the catalog "
                            f"(it has {', '.join(P.NAMES.get(p, p) for p in g.peaks)})")
        return g.peaks[prec], f"the {g.short}'s dense {P.NAMES.get(prec, prec)} peak"
    if figure == "memory-bandwidth":
        if not g.memory_bandwidth_gbs:
            raise UserError(f"{g.name}: no memory bandwidth in the catalog")
        return g.memory_bandwidth_gbs, f"the {g.short}'s {g.memory_type} bandwidth"
    if figure == "host-link":
        return _pcie(g)
    return _link(g, n)[:2]


def nvls(g: catalog.GPU, n: int) -> bool:
    """Whether an all-reduce over n of these GPUs may reduce in the NVSwitch (the catalog's nvlink_sharp: Hopper
    on), which joins more than two cards that are not PCIe ones (a bridge pairs two)."""
    return bool(g.nvlink_gbs) and not I.is_pcie_card(g) and n > 2 and g.nvlink_sharp


def _link(g: catalog.GPU, n: int) -> tuple[float, str, float]:
    """(the all-reduce busbw bound, what it is, the link's rate per direction: the base of its shares)."""
    if g.nvlink_gbs and (not I.is_pcie_card(g) or n <= 2):
        factor = 2 * (n - 1) / n if nvls(g, n) else 1.0
        why = (f"NVLink {g.nvlink_gbs:g} GB/s / 2 per direction"
               + (f" x 2(n-1)/n = {factor:.2f} (NVLink SHARP reduces in the switch)" if factor > 1 else ""))
        return g.nvlink_gbs / 2 * factor, why, g.nvlink_gbs / 2
    bw, why = _pcie(g)
    return bw, why + (" (NVLink bridges pair only two cards)" if g.nvlink_gbs else ""), bw


def base(figure: str, g: catalog.GPU, prec: str = "", n: int = 1) -> float:
    """What a share of the figure is taken of: its bound, or for an all-reduce the link per direction (an
    all-reduce reduced in the switch reaches more than it: shares compare across GPU counts this way)."""
    return _link(g, n)[2] if figure == "allreduce-busbw" else bound(figure, g, prec, n)[0]


def regime(figure: str, g: catalog.GPU, n: int) -> str:
    if figure != "allreduce-busbw":
        return ""
    return "nvls" if nvls(g, n) else "ring"


def _value(r, figure: str) -> float | None:
    if figure == "compute-peak":
        return r.tflops
    return r.extra.busbw_gbs if figure == "allreduce-busbw" else r.throughput_median


def measured_evidence(store, figure: str) -> list[MicroEvidence]:
    """The finite measurements of the database (full size, on a catalog GPU, under the bound)."""
    if store is None:
        return []
    rows = [r for w in registry.named(device_figure=figure) for r in store.results(workload=w, status="ok")]
    return evidence_of(rows, figure)


def evidence_of(results, figure: str) -> list[MicroEvidence]:
    """The finite measurements of the figure among results (full size, on a catalog GPU, under the bound)."""
    from gpuarena.analysis.rows.common import gpu_of

    out = []
    for r in results:
        cls = registry.find(r.workload)
        if r.status != "ok" or cls is None or cls.device_figure != figure:
            continue
        g = catalog.find(gpu_of(r))
        v = _value(r, figure)
        if g is None or r.source == "published" or r.size == "tiny" or not v:
            continue
        prec = precision_class(r.precision) if figure == "compute-peak" else ""
        p = r.precision if figure == "compute-peak" else ""
        try:
            b, ref = bound(figure, g, p, r.gpus)[0], base(figure, g, p, r.gpus)
        except UserError:
            continue
        if v <= b:    # a measurement above the bound is a broken measurement, not evidence
            out.append(MicroEvidence(figure, prec, g.name, r.gpus, v, v / ref, f"gpuarena {r.workload} {r.variant}",
                                     f"gpuarena measurement (run {r.run_id})", True, regime(figure, g, r.gpus)))
    return out


@functools.lru_cache(maxsize=2)
def published_evidence(path: Path | None = None) -> tuple[MicroEvidence, ...]:
    """data/micro_ceilings.csv (or path) as evidence: rows data/evidence.py has checked, each refused with
    its file when it names no catalog GPU, no micro-benchmark, or a unit not its figure's."""
    out = []
    for row in evidence.micro_ceilings(path):
        where = f"{Path(path or evidence.MICRO_CSV).name}: {row.workload} on {row.gpu}"
        try:
            g, fig = catalog.match(row.gpu), registry.get(row.workload).device_figure
            if fig is None:
                raise UserError(f"{row.workload} is not a micro-benchmark")
            if row.unit != UNITS[fig]:
                raise UserError(f"the figure is in {UNITS[fig]}, not {row.unit}")
            b = base(fig, g, row.precision, row.gpus)
        except UserError as e:
            raise UserError(f"{where}: {e}") from None
        prec = precision_class(row.precision) if row.precision else ""
        out.append(MicroEvidence(fig, prec, g.name, row.gpus, row.value, row.value / b, row.engine, row.source,
                                 regime=row.algorithm or regime(fig, g, row.gpus)))
    return tuple(out)


def ceiling(figure: str, prec: str, generation: str, store=None, regime: str = "",
            pool: list[MicroEvidence] | None = None) -> credible.Ceiling[MicroEvidence] | None:
    """The best share credibly reached of the figure at the precision class (an all-reduce's: reduced in the
    switch or not) on this generation, by the rule model claims follow (credible.ceiling_of)."""
    pool = list(published_evidence()) + measured_evidence(store, figure) if pool is None else pool
    cls = precision_class(prec) if prec else ""
    same = [e for e in pool if e.figure == figure and e.precision == cls and e.regime == regime]
    return credible.ceiling_of(same, generation, lambda e: e.share)


def _claim(claim: dict) -> tuple[catalog.GPU, str, str, float, int]:
    """(gpu, figure, precision, claimed value, gpu count) of a claim, every input refused as one line."""
    workload = claim["workload"]
    figure = registry.get(workload).device_figure
    if not claim.get("gpu"):
        raise UserError(f"a {workload} claim needs --gpu")
    extra = [k for k in NOT_USED if claim.get(k) not in (None, "")]
    if extra:
        raise UserError(f"{', '.join(extra)}: not part of a {workload} claim (give its figure as --throughput "
                        f"in {UNITS[figure]}{', --precision' if figure == 'compute-peak' else ''}"
                        f"{' and --gpus' if figure == 'allreduce-busbw' else ''})")
    try:
        value, n = claim_number(claim, "throughput"), int(float(str(claim.get("gpus") or 1).strip()))
    except ValueError:
        raise UserError(f"claim {claim.get('gpu')!s:.40} {workload}: throughput and gpus must be numbers") from None
    if value is None:
        raise UserError(f"a {workload} claim needs its figure: --throughput in {UNITS[figure]}")
    finite(value, f"{workload} figure", cap=MAX_THROUGHPUT)
    if figure == "allreduce-busbw" and not 2 <= n <= 1024:
        raise UserError(f"an {workload} bus bandwidth claim needs --gpus from 2 to 1024 (got {n})")
    if figure != "allreduce-busbw" and n != 1:
        raise UserError(f"a {workload} figure is one GPU's: leave --gpus out")
    stated = str(claim.get("precision") or "").strip().lower()
    if figure == "compute-peak":
        if not stated:
            raise UserError(f"a {workload} claim needs --precision (fp32, tf32, bf16, fp16, fp8, int8)")
        prec = catalog.norm_precision("fp32" if stated == "fp32-ieee" else stated)
    elif stated not in ("", "n/a", "-"):
        raise UserError(f"--precision {stated!r}: a {workload} claim moves bytes and has none; leave it out")
    else:
        prec = ""
    return catalog.match(claim["gpu"]), figure, prec, value, n


def check_micro(claim: dict, store=None) -> dict:
    """One micro-benchmark claim {gpu, workload, throughput (its figure)[, precision, gpus, source]} ->
    the verdict row check renders (see the module docstring)."""
    g, figure, prec, value, n = _claim(claim)
    top, what = bound(figure, g, prec, n)
    unit = UNITS[figure]
    share = value / top
    head = (f"{value:,.1f} {unit} is {share:.0%} of {what} ({top:,.1f} {unit})" if share <= 1 else
            f"{value:,.1f} {unit} is {share:.2f}x {what} ({top:,.1f} {unit})")
    c = ceiling(figure, prec, P.arch_of(g), store, regime(figure, g, n))
    e = None if c is None else c.best
    of = "the link per direction" if figure == "allreduce-busbw" else "the bound"
    most = None if e is None else min(top, e.share * (1 + MICRO_SPREAD) * base(figure, g, prec, n))
    if share > 1 + 1e-9:
        verdict, reason = V.IMPOSSIBLE, head + _above(figure, g, prec, value, top)
    elif e is None:
        verdict, reason = V.PLAUSIBLE, f"{head}; no credible figure known for it, so only the bound limits it"
    else:
        ref = (f"{e.share:.0%} of {of} ({e.value:,.1f} {unit} on {catalog.match(e.gpu).short}"
               + (f" x{e.gpus}" if e.gpus > 1 else "") + f", {e.engine}: {e.source})"
               + (f"; no {P.arch_of(g).capitalize()} evidence, so the best of any generation" if c.borrowed else ""))
        above = value > most * (1 + 1e-9)
        verdict = V.IMPLAUSIBLE if above else V.PLAUSIBLE
        reason = (f"{head}; above the best credibly reached, {ref}, widened by {MICRO_SPREAD:.0%} "
                  f"(card-to-card spread): at most {most:,.1f} {unit}" if above else
                  f"{head}; within the best credibly reached, {ref}, and the {MICRO_SPREAD:.0%} card-to-card spread")
    if figure == "allreduce-busbw":
        expect, how = I.catalog_busbw(g, n)
        reason += f"; the interconnect model expects about {expect:,.0f} GB/s ({how})"
    return {"gpu": g.name, "workload": claim["workload"], "precision": prec or "n/a",
            "executed": prec or "n/a", "batch_size": None, "params": {}, "gpus": n, "throughput": value,
            "latency": None, "scaling": None, "claim_text": f"{value:,.1f} {unit}",
            "implied_tflops": value if figure == "compute-peak" else None,
            "peak_tflops": top if figure == "compute-peak" else None, "bound": top, "bound_unit": unit,
            "bound_is": what, "share_of_peak": share, "credible_max": most,
            "ceiling": None if e is None else {"share": e.share, "gpu": e.gpu, "gpus": e.gpus, "value": e.value,
                                               "engine": e.engine, "source": e.source, "borrowed": c.borrowed},
            "verdict": verdict, "reason": reason, "source": claim.get("source", "")}


def _above(figure: str, g: catalog.GPU, prec: str, value: float, top: float) -> str:
    """What a figure above its bound would need."""
    if figure == "memory-bandwidth":
        return "; a copy that fits in L2 measures the cache, not the memory"
    if figure == "host-link":
        return "; a link at another generation or width, or a host-to-host copy, would explain it"
    if figure != "compute-peak":
        return ""
    sparse = g.sparsity_2_4 and prec not in ("fp32", "fp64")
    if sparse and abs(value / (2 * top) - 1) <= SPARSE_MATCH:
        return (f"; it matches the 2:4 structured-sparsity peak (2 x {top:g} = {2 * top:g}): "
                "a sparsity figure quoted as dense")
    out = f"; only 2:4 structured sparsity ({2 * top:g}) reaches it" if sparse and value <= 2 * top else ""
    if prec in ("fp32", "fp64"):
        out += f"; {P.would_need(value, g, prec)}" if prec == "fp32" else ""
    return out
