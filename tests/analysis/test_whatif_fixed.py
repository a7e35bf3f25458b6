"""whatif: PCIe cards over PCIe beyond a bridged pair, stated batch defaults, composed variants, bad numbers."""

import math

import pytest

from gpuarena.analysis.physics import interconnect, whatif
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.report.text import whatif as whatif_text


def test_pcie_card_uses_pcie_beyond_a_bridged_pair():
    g = catalog.match("A100 80GB PCIe")
    assert interconnect.catalog_busbw(g, 2)[0] == pytest.approx(240)           # NVLink bridge pairs two cards
    bw8, why = interconnect.catalog_busbw(g, 8)
    assert bw8 == pytest.approx(0.8 * 31.5) and "pair only two" in why      # data/pcie_links.csv: gen 4 x16
    p = whatif.predict("resnet50-train", g.name, [2, 8], throughput=1000, batch_size=256)
    sxm = whatif.predict("resnet50-train", "A100 80GB SXM4", [8], throughput=1000, batch_size=256)
    assert p.rows[1].efficiency < sxm.rows[0].efficiency < p.rows[0].efficiency + 1e-9
    assert p.rows[1].busbw_gbs == pytest.approx(0.8 * 31.5)


def test_missing_batch_size_is_the_stated_workload_default():
    p = whatif.predict("resnet50-train", "H200", [2], throughput=2000)
    from gpuarena.workloads import registry

    assert p.batch_from == "the workload's default"
    assert p.batch_size == registry.get("resnet50-train").resolve_params({})["batch_size"]
    assert "default" in whatif_text.render(p, "table")


def test_composed_variant_sends_two_byte_gradients():
    assert whatif.compressed("static-graph+fp16-compress", "resnet50")
    assert not whatif.compressed("static-graph", "resnet50")
    full = whatif.predict("ddp-train", "H200", [2], model="resnet50", variant="static-graph", throughput=2000,
                          batch_size=256)
    half = whatif.predict("ddp-train", "H200", [2], model="resnet50", variant="static-graph+fp16-compress",
                          throughput=2000, batch_size=256)
    assert half.grad_bytes == pytest.approx(full.grad_bytes / 2)
    with pytest.raises(UserError):
        whatif.compressed("fp16-compress+bf16-compress", "resnet50")


@pytest.mark.parametrize("kw", [{"throughput": math.nan}, {"throughput": -1.0}, {"throughput": 0.0},
                                {"throughput": 100.0, "batch_size": 0}, {"throughput": 100.0, "busbw": math.nan},
                                {"throughput": 100.0, "overlap": math.inf}])
def test_invalid_numbers_are_refused(kw):
    with pytest.raises(UserError):
        whatif.predict("resnet50-train", "H200", [2], **kw)


def test_efficiency_names_both_baselines():
    p = whatif.predict("resnet50-train", "H200", [4], throughput=2000, batch_size=256)
    assert p.efficiency_baseline == "the plain single-GPU step"
    assert p.rows[0].efficiency_vs_plain == pytest.approx(p.rows[0].efficiency)
    d = whatif.predict("ddp-train", "H200", [4], model="resnet50", throughput=2000, batch_size=256)
    assert d.efficiency_baseline == "DDP at 1 GPU"
