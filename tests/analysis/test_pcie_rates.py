"""PCIe rates from one source (data/pcie_links.csv, each row with its source): the interconnect model,
the training plan's links, the host-link bound and the acceptance checks read the same figures, and a
card whose generation the catalog does not give (or the file does not hold) is an error, never gen 4."""

import dataclasses
import re
from pathlib import Path

import pytest

from gpuarena.analysis.physics import interconnect as I
from gpuarena.analysis.physics import micro_check
from gpuarena.data import catalog, evidence
from gpuarena.errors import UserError

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuarena"


def test_the_rates_are_the_files_with_their_sources():
    rows = {link.gen: link for link in evidence.pcie_links()}
    assert {g: r for g, (r, _) in I.pcie_links().items()} == {g: x.x16_gbs_per_direction for g, x in rows.items()}
    assert I.pcie_links()[4][0] == 31.5 and all(src for _, src in I.pcie_links().values())


@pytest.mark.parametrize("g", catalog.load(), ids=lambda g: g.short)
def test_every_catalog_card_bounds_its_host_link_at_its_generations_rate(g):
    gen, bw = I.pcie_link(g)
    assert gen == int(g.pcie_gen) and bw == I.pcie_links()[gen][0]
    assert micro_check.bound("host-link", g)[0] == bw
    if not g.nvlink_gbs:    # a card without NVLink: its all-reduce runs over PCIe at the file's rate
        busbw, how = I.catalog_busbw(g, 4)
        assert busbw == pytest.approx(I.NVLINK_EFF * bw) and f"gen{gen} x16 {bw:g} GB/s" in how


def test_an_unknown_pcie_generation_is_an_error_not_gen_4():
    l40s = catalog.match("L40S")
    for g, match in ((dataclasses.replace(l40s, pcie_gen=None), "no PCIe generation in the catalog"),
                     (dataclasses.replace(l40s, pcie_gen=6.0), r"PCIe gen6: not in data/pcie_links.csv")):
        with pytest.raises(UserError, match=match):
            I.catalog_busbw(g, 4)
        with pytest.raises(UserError, match=match):
            micro_check.bound("host-link", g)


def test_no_module_keeps_a_pcie_rate_of_its_own():
    """The rates 16/32/64 (or 15.75/31.5/63) GB/s are written only in data/pcie_links.csv."""
    rate = re.compile(r"\{\s*3\s*:\s*1[56]|\b(31\.5|63\.0)\b|get\(int\(\w+\.pcie_gen or 4\)")
    hits = [f"{p.relative_to(SRC)}:{i}" for p in SRC.rglob("*.py")
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if rate.search(line) and not line.lstrip().startswith("#")]
    assert hits == []
