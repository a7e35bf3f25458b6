"""Interconnect figures for the data-parallel model (whatif.py): the time of a ring all-reduce,
and the bus bandwidth it runs at, measured or derived from the catalog.

- measured: `allreduce` results in the database on that GPU, at the GPU count asked for or the
  nearest measured, interpolated in log(size) at the size of the messages sent.
- catalog: NVIDIA's NVLink figure is the total of both directions, and nccl-tests all-reduce
  busbw reaches about 80% of one direction (e.g. ~230-240 GB/s of A100's 300 GB/s), so
  busbw = NVLINK_EFF x nvlink / 2; without NVLink, the card's PCIe x16 link per direction after
  128b/130b encoding (data/pcie_links.csv, each generation's rate with its source) x the same
  factor.  A card whose generation the catalog does not give, or that file does not hold, is an
  error, never taken as another generation.
- one node: NVLink (and a server's PCIe) joins NODE_GPUS cards; beyond them the ring crosses the network
  between nodes, which the catalog has no figure for (it names GPUs, not NICs), so a count above
  NODE_GPUS runs at a given busbw or at one measured across nodes, never at one node's.
"""

from __future__ import annotations

import functools
import math

from gpuarena.analysis.rows import common as R
from gpuarena.data import catalog, evidence
from gpuarena.errors import UserError
from gpuarena.workloads import registry

NVLINK_EFF = 0.8
# GPUs one node's NVLink joins: an HGX board's 8 (the catalog's own sources: AWS p5.48xlarge and p5en.48xlarge
# carry 8 H100s / H200s, MLPerf's H200-SXM-141GBx8 system), and the 8 GPUs of the 8-GPU servers
NODE_GPUS = 8


def ring_allreduce_s(nbytes: float, n: int, busbw_gbs: float) -> float:
    """Time of a ring all-reduce: 2 (n-1)/n x bytes / busbw (nccl-tests' busbw definition)."""
    if n <= 1:
        return 0.0
    return 2 * (n - 1) / n * nbytes / (busbw_gbs * 1e9)


@functools.lru_cache(maxsize=1)
def pcie_links() -> dict[int, tuple[float, str]]:
    """PCIe generation -> (x16 GB/s per direction after encoding, source), from data/pcie_links.csv."""
    return {link.gen: (link.x16_gbs_per_direction, link.source) for link in evidence.pcie_links()}


def pcie_rate(gen: int) -> float:
    """x16 GB/s per direction of a PCIe generation; UserError for one data/pcie_links.csv does not hold."""
    if gen not in pcie_links():
        raise UserError(f"PCIe gen{gen}: not in data/pcie_links.csv (it holds gen "
                        f"{', '.join(str(k) for k in sorted(pcie_links()))})")
    return pcie_links()[gen][0]


def pcie_link(g: catalog.GPU) -> tuple[int, float]:
    """(the card's PCIe generation, its x16 GB/s per direction); UserError when the catalog gives no
    generation or data/pcie_links.csv has no rate for it (never another generation's rate)."""
    if not g.pcie_gen:
        raise UserError(f"{g.name}: no PCIe generation in the catalog (gpu_specs.csv pcie_gen) to bound its host link")
    gen = int(g.pcie_gen)
    return gen, pcie_rate(gen)


def is_pcie_card(g: catalog.GPU) -> bool:
    """A PCIe card's NVLink is a bridge that pairs two cards; beyond two they talk over PCIe."""
    return "pcie" in g.name.lower() or (not g.nvlink_gbs)


def catalog_busbw(g: catalog.GPU, n: int = 2) -> tuple[float, str]:
    if g.nvlink_gbs and (not is_pcie_card(g) or n <= 2):
        bridge = " (bridged pair)" if is_pcie_card(g) else ""
        return NVLINK_EFF * g.nvlink_gbs / 2, f"catalog NVLink{bridge} {g.nvlink_gbs:g} GB/s / 2 x {NVLINK_EFF}"
    gen, bw = pcie_link(g)
    why = " (NVLink bridges pair only two cards)" if g.nvlink_gbs else ""
    return NVLINK_EFF * bw, f"catalog PCIe gen{gen} x16 {bw:g} GB/s per direction x {NVLINK_EFF}{why}"


def busbw_curves(store, gpu: str) -> dict[int, list[tuple[float, float]]]:
    """Measured all-reduce bus bandwidth on one GPU model: {GPU count: [(message bytes, busbw GB/s)]},
    the newest result per (count, size)."""
    curves: dict[int, dict[float, float]] = {}
    if store is None:
        return {}
    for r in store.results(status="ok"):
        if R.gpu_of(r) != gpu or not registry.has(r.workload, device_figure="allreduce-busbw"):
            continue
        bw = r.extra.busbw_gbs
        size = R.message_bytes(r)
        if bw and size:
            curves.setdefault(r.gpus, {})[size] = bw
    return {n: sorted(c.items()) for n, c in curves.items()}


def interpolate(points: list[tuple[float, float]], size: float) -> float:
    """busbw at a message size: linear in log(size) between measured sizes, the end value beyond them."""
    if size <= points[0][0]:
        return points[0][1]
    for (s0, b0), (s1, b1) in zip(points, points[1:]):
        if size <= s1:
            return b0 + (b1 - b0) * math.log(size / s0) / math.log(s1 / s0)
    return points[-1][1]


def node_busbw(store, g: catalog.GPU, n: int, message_bytes: float) -> tuple[float, str]:
    """busbw of n GPUs: measured, else the catalog's, within one node; beyond NODE_GPUS only a
    measurement across nodes (at more than NODE_GPUS GPUs) says, else the user must."""
    if n <= NODE_GPUS:
        return measured_busbw(store, g.name, n, message_bytes) or catalog_busbw(g, n)
    across = measured_busbw(store, g.name, n, message_bytes)    # only counts above NODE_GPUS
    if across is None:
        raise UserError(f"{n} GPUs: beyond one {NODE_GPUS}-GPU node the all-reduce crosses the network between "
                        f"nodes, which the catalog has no bandwidth for (its NVLink joins one node): give it "
                        f"(whatif --busbw, GB/s across your nodes) or import an allreduce result of "
                        f"{g.short} measured on more than {NODE_GPUS} GPUs")
    return across


def measured_busbw(store, gpu: str, n: int | None = None,
                   message_bytes: float | None = None) -> tuple[float, str] | None:
    """busbw from the measured all-reduce curve: at n GPUs (else the nearest count measured on the same
    side of one node's NODE_GPUS), at the message size DDP sends (its bucket), else at the largest size
    measured."""
    curves = busbw_curves(store, gpu)
    if n is not None:
        curves = {c: p for c, p in curves.items() if (c > NODE_GPUS) == (n > NODE_GPUS)}
    if not curves:
        return None
    count = min(curves, key=lambda c: (abs(c - (n or max(curves))), -c))
    points = curves[count]
    size = message_bytes or points[-1][0]
    return interpolate(points, size), f"measured allreduce ({count} GPUs) at {mib_text(size)}"


def mib_text(nbytes: float) -> str:
    return f"{nbytes / 2**20:g} MiB" if nbytes >= 2**20 else f"{nbytes / 1024:g} KiB"
