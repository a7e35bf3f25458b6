"""The expected figure of a device check from the catalog: a matmul's TFLOP/s per dtype, a device
copy's GB/s, a host link's GB/s by PCIe generation and width, a collective's bus bandwidth.

    expected_device(kind, gpu, dtype=None, link=None, *, gpus=1, size_mb=None, measured=None,
                    measured_high=None, results=()) -> Expected

``figure`` = the physical bound (analysis/physics/micro_check.py ``bound``: the catalog's dense peak, its
memory bandwidth, its PCIe link, its NVLink per direction) x the best share of that bound a healthy
card of the same generation reaches (data/micro_ceilings.csv, every row sourced; the finite
measurements in ``results`` raise it, never set it alone: credible.ceiling_of, the rule ``check``
follows).  ``low`` = figure x (1 - band): a figure whose 95% interval ends under ``low`` is below
expected.  The band adds, each for a stated reason:

- MICRO_SPREAD (5%): card-to-card spread of one model (micro_check.MICRO_SPREAD, sourced there);
- the spread of the published shares of that generation (how far two healthy cards' figures differ),
  for a matmul at least SUSTAINED_SPREAD (13%): a sustained product under the power cap against the
  burst most published figures are (the H200's bf16 8192^3: 677.4 TFLOP/s sustained at 687 W, run
  20261129-151415-f3a8c6, against 773.3 burst, run 20261129-181742-380252; BENCHMARKS.md 'Ceilings');
- OTHER_MODEL (5%) when the evidence is another card of the generation (a card's own published figure
  is preferred to its generation's best), BORROWED (10%) when it is another generation (said:
  "unverified"; such a figure is context and never flags, as a borrowed ceiling never rejects a claim);
- a matmul's figure scaled by the clock the card's power limit sustains against the evidence card's
  (analysis/rows/power.py: an A100 PCIe at 250 W does not hold the SXM4's quoted clock);
- collectives: their small messages are latency-bound, and how much depends on the harness
  (torch.distributed here ~40 us, a Megatron harness 120-200 us on 8 H100s: IBM/pytorch-communication-
  benchmarks issue #1), so below FLAG_MIN_BYTES they are context and never flag.

``kind`` is a workload name (matmul, membw, h2d, d2h, allreduce, allgather, reducescatter, broadcast)
or "copy" for membw.  ``link`` is (PCIe generation, width) the slot and card train at (NVML's maximum
link); the figure is at the lower of it and the card's catalog generation x16, and ``causes`` says so
when the slot holds the card back.  Figures are in ``unit`` (TFLOP/s for a matmul, GB/s otherwise).
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuarena.analysis.physics import micro_check as M
from gpuarena.analysis.physics import interconnect as I
from gpuarena.analysis.rows import power
from gpuarena.analysis.rows import precision as P
from gpuarena.analysis.physics.roofline import precision_class
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.store.derived import Expected, ModelFigure
from gpuarena.workloads import registry

SUSTAINED_SPREAD = 0.13    # 1 - 677.4 / 773.3: the H200's sustained bf16 8192^3 against its burst (docstring)
OTHER_MODEL = 0.05         # the evidence is another card of the generation (HBM3 vs HBM3e, clocks, power)
BORROWED = 0.10            # no evidence of this generation: another generation's share, unverified
# Pageable host copies stage through host memory: the link is not what bounds them.  gpuarena's H200
# (run 20261129-151415-f3a8c6, BENCHMARKS.md 'Ceilings'): 8.4 / 55.4 GB/s to the device, 15.6 / 55.3 back.
PAGEABLE_SHARE = {True: 8.4 / 55.4, False: 15.6 / 55.3}   # by the copy's direction: to the device or back
PAGEABLE_BAND = 0.50       # host-dependent (CPU memory, NUMA): context, never a flag
# Collectives: a latency per call on top of bytes / busbw.  gpuarena's own 2-H200 all-reduce of 1 KiB ran
# in ~40 us (busbw 0.0255 GB/s, run 20261129-165210-b0758c, docs/data/h200-x2-2026-11-29.json).
COLLECTIVE_LATENCY_S = 40e-6
FLAG_MIN_BYTES = 64 * 2**20
OTHER_COLLECTIVE = 0.15    # allgather/reducescatter/broadcast judged by all-reduce evidence: context only
KINDS = {"copy": "membw"}


def figure_of(kind: str) -> str | None:
    """The device figure a check measures (compute-peak, memory-bandwidth, host-link, allreduce-busbw): the
    workload's own ``device_figure`` fact; a collective without one (all-gather, reduce-scatter, broadcast)
    is judged by all-reduce evidence, as context (OTHER_COLLECTIVE)."""
    wl = KINDS.get(kind, kind)
    return registry.fact(wl, "device_figure") or (
        "allreduce-busbw" if registry.fact(wl, "kind") == "collective" else None)


def _gpu(gpu) -> catalog.GPU:
    return gpu if isinstance(gpu, catalog.GPU) else catalog.match(str(gpu))


def _measured(results: Iterable, figure: str) -> list[M.MicroEvidence]:
    """Finite measurements of the figure among ``results`` (pinned host copies only), as evidence."""
    pinned = [r for r in results if figure != "host-link" or r.params.get("pinned", True) is not False]
    return M.evidence_of(pinned, figure) if pinned else []


def _link_gen(g: catalog.GPU, link) -> tuple[float, str, list[str]]:
    """(x16-equivalent GB/s per direction of the link the figure is at, what it is, causes)."""
    card = int(g.pcie_gen or 0)
    if link is None:
        bw, what = M.bound("host-link", g)
        return bw, what, []
    gen, width = int(link[0] or card), int(link[1] or 16)
    gen = min(gen, card) if card else gen
    bw = I.pcie_rate(gen) * min(width, 16) / 16
    why = [] if (gen, width) == (card, 16) else [
        f"the slot trains the link at PCIe gen{gen} x{width} (the {g.short} is gen{card} x16): "
        f"the figure is at the slot's rate"]
    return bw, f"PCIe gen{gen} x{width} per direction after 128b/130b encoding", why


def _collective_factor(op: str, n: int, size_mb: float | None, busbw: float) -> tuple[float, str]:
    """The share of the large-message busbw a message of size_mb reaches, after a fixed latency per call."""
    if not size_mb:
        return 1.0, ""
    from gpuarena.workloads.collectives.spec import bus_factor

    bus_bytes = size_mb * 2**20 * bus_factor(op if op in ("allreduce", "allgather", "reducescatter", "broadcast")
                                             else "allreduce", n)
    f = 1 / (1 + COLLECTIVE_LATENCY_S * busbw * 1e9 / bus_bytes)
    return f, f" x {f:.2f} at {size_mb:g} MiB ({COLLECTIVE_LATENCY_S * 1e6:.0f} us per call)"


def _band(pool, c, g: catalog.GPU, figure: str, prec: str, regime: str) -> tuple[float, list[str]]:
    """(the band below the figure a healthy card falls in, why): see the module docstring."""
    e = c.best
    same = [x.share for x in pool if x.figure == figure and x.precision == (precision_class(prec) if prec else "")
            and x.regime == regime and not x.measured and x.generation == e.generation]
    spread = 1 - min(same) / max(same) if same else 0.0
    notes = []
    if figure == "compute-peak" and spread < SUSTAINED_SPREAD:     # published figures are bursts
        spread = SUSTAINED_SPREAD
        notes.append(f"{SUSTAINED_SPREAD:.0%} sustained under the power cap against a burst")
    elif spread:
        notes.append(f"{spread:.0%} between the generation's published figures")
    band = M.MICRO_SPREAD + spread
    if c.borrowed:
        band += BORROWED
        notes.append(f"unverified: no {P.arch_of(g).capitalize()} evidence, {BORROWED:.0%} wider")
    elif e.gpu != g.name:
        band += OTHER_MODEL
        notes.append(f"another {e.generation.capitalize()} card's figure, {OTHER_MODEL:.0%} wider")
    return band, notes


def _evidence(figure: str, g: catalog.GPU, prec: str, n: int, results: Iterable):
    """(the evidence pool, the ceiling the figure is taken from, the NVLS ceiling or None, the regime)."""
    pool = list(M.published_evidence()) + _measured(results, figure)
    regime = M.regime(figure, g, n)
    c = M.ceiling(figure, prec, P.arch_of(g), regime=regime, pool=pool)
    nvls = None
    if regime == "nvls":    # reduced in the switch only where the system enables it (NVLS): expect the ring
        nvls, regime = c, "ring"
        c = M.ceiling(figure, prec, P.arch_of(g), regime=regime, pool=pool) or nvls
    if c is None:
        raise UserError(f"no evidence of {figure.replace('-', ' ')}"
                        + (f" at {P.NAMES.get(prec, prec)}" if prec else "") + " in data/micro_ceilings.csv")
    own = [x for x in pool if x.gpu == g.name and not x.measured and x.figure == figure and x.regime == regime
           and x.precision == (precision_class(prec) if prec else "")]
    if own and not c.borrowed:      # the card's own published figure is the most like-for-like evidence
        c = type(c)(max(own, key=lambda x: x.share), False)
    return pool, c, nvls, regime


def expected_device(kind: str, gpu, dtype: str | None = None, link: tuple | None = None, *, gpus: int = 1,
                    size_mb: float | None = None, shape: tuple[int, int, int] | None = None,
                    measured: float | None = None, measured_high: float | None = None,
                    pinned: bool = True, results: Iterable = ()) -> Expected:
    """The catalog's expected figure of one device check on ``gpu`` (a catalog.GPU or a name), with its
    band, source and, when ``measured`` is given (its 95% interval's top in ``measured_high``), the ratio
    and the below-expected verdict.  Raises UserError where the catalog cannot say (no peak at the dtype,
    no bandwidth, no PCIe generation).  See the module docstring for every term."""
    g, wl = _gpu(gpu), KINDS.get(kind, kind)
    figure = figure_of(wl)
    if figure is None:
        raise UserError(f"{kind}: not a device check (a micro-benchmark, a collective or copy)")
    prec = catalog.norm_precision(dtype) if figure == "compute-peak" and dtype else ""
    if figure == "compute-peak" and not prec:
        raise UserError("a matmul's expected figure needs its dtype")
    n = int(gpus or 1)
    top, what = M.bound(figure, g, prec, n)
    base = M.base(figure, g, prec, n)
    causes: list[str] = []
    if figure == "host-link":
        top, what, causes = _link_gen(g, link)
        base = top
    pool, c, nvls, regime = _evidence(figure, g, prec, n, results)
    e = c.best
    band, notes = _band(pool, c, g, figure, prec, regime)
    value = min(top, e.share * base)
    how = (f"catalog: {e.share:.0%} of {what} ({base:,.1f}) as on {catalog.match(e.gpu).short}"
           + (f" x{e.gpus}" if e.gpus > 1 else "") + f" ({e.engine}: {e.source})")
    like = not c.borrowed           # another generation's figure only warns (unverified), never flags
    if figure == "compute-peak":     # a card whose power limit cannot hold its quoted clock (analysis/rows/power.py)
        held = power.sustained_fraction(g) / power.sustained_fraction(catalog.match(e.gpu))
        if abs(held - 1) > 1e-9:
            value = min(top, value * held)
            how += f" x {held:.2f}: the clock its {g.tdp_w:g} W limit sustains (analysis/rows/power.py)"
    if figure == "compute-peak" and shape:
        value, how = _shape_roof(g, prec, shape, value, how)
    if figure == "host-link" and not pinned:
        share = PAGEABLE_SHARE[bool(registry.fact(wl, "to_device", True))]
        value *= share
        band, like = PAGEABLE_BAND, False
        how += f"; pageable: x {share:.2f} as gpuarena's H200 measured (host-dependent, context)"
    if figure == "allreduce-busbw":
        f, at = _collective_factor(wl, n, size_mb, value)
        value, how = value * f, how + at
        if nvls is not None and nvls is not c:
            switch = min(top, nvls.best.share * base * f)
            notes.append(f"up to {switch:,.0f} GB/s where NCCL reduces in the NVSwitch (NVLS)")
        if wl != "allreduce":
            band += OTHER_COLLECTIVE
            like = False
            notes.append(f"{wl} judged by all-reduce evidence: context")
        if size_mb and size_mb * 2**20 < FLAG_MIN_BYTES:
            like = False
            notes.append("a latency-bound message size: context")
    band = min(band, 0.9)
    high = max(min(top, value * (1 + M.MICRO_SPREAD)), switch if nvls is not None and nvls is not c else 0)
    return _verdict(value, band, high, figure, how, notes, like, measured, measured_high, causes)


def _verdict(value, band, high, figure, how, notes, like, measured, measured_high, causes) -> Expected:
    """The Expected of a catalog figure, with the ratio and verdict where a measured figure is given."""
    out = {"figure": value, "basis": "catalog", "band": band, "low": value * (1 - band),
           "high": high, "unit": M.UNITS[figure],
           "source": how + (f"; band {band:.0%}: " + ", ".join(notes) if notes else f"; band {band:.0%}"),
           "like_for_like": like, "below": False,
           "model": ModelFigure(value=value, band=band, how=how, same_recipe=False)}
    if measured:
        hi = measured_high or measured
        out |= {"ratio": measured / value, "below": like and hi < out["low"]}
        out["model"] = ModelFigure(value=value, band=band, how=how, ratio=measured / value)
        if out["below"] or causes:
            out["causes"] = causes
    return Expected(**out)


def _shape_roof(g: catalog.GPU, prec: str, shape, value: float, how: str) -> tuple[float, str]:
    """A product's TFLOP/s under the roofline of its shape: 2mnk FLOPs over (mk + kn + mn) operands moved."""
    m, n, k = (int(x) for x in shape)
    size = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}.get(prec, 2)
    flops, nbytes = 2.0 * m * n * k, float(m * k + k * n + m * n) * size
    bw = g.memory_bandwidth_gbs or 0
    mem = flops / nbytes * bw / 1e3 if bw else float("inf")     # TFLOP/s the memory feeds
    if mem < value:
        return mem, f"{how}; memory-bound at {m}x{n}x{k}: {mem:,.1f} TFLOP/s"
    return value, how


def value_of(r) -> float | None:
    """A device-check result's figure: a matmul's TFLOP/s, a collective's bus bandwidth, else its GB/s."""
    figure = figure_of(r.workload)
    if figure is None:
        return None
    return {"compute-peak": r.tflops, "allreduce-busbw": r.extra.busbw_gbs}.get(figure, r.throughput_median)


def device_result(r, results: Iterable = ()) -> Expected | None:
    """The catalog's expected figure of a stored device-check result (matmul, membw, h2d/d2h, collectives),
    in its figure's unit (TFLOP/s, GB/s; a collective's bus bandwidth), else None."""
    figure = figure_of(r.workload)
    g = catalog.find(r.device_name or "")
    if figure is None or g is None:
        return None
    val = value_of(r)
    if not val or not r.throughput_median:
        return None
    hi = r.throughput.ci95_high if r.throughput and r.throughput.ci95_high else r.throughput_median
    p = r.params
    try:
        return expected_device(r.workload, g, p.get("dtype") if figure == "compute-peak" else None,
                               gpus=r.gpus, size_mb=p.get("size_mb") if figure == "allreduce-busbw" else None,
                               shape=(p["m"], p["n"], p["k"]) if figure == "compute-peak" and "m" in p else None,
                               measured=val, measured_high=val * hi / r.throughput_median,
                               pinned=p.get("pinned", True) is not False, results=results)
    except UserError:
        return None

