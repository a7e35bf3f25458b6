"""The evidence claims are judged by (ceilings.csv for model workloads; micro_ceilings.csv and pcie_links.csv
for micro-benchmarks) loads through data/evidence.py's checks, as the claims and hold-out ratios do: a
malformed row is refused with its file and line, not read as a zero, a KeyError or an all-reduce regime no
claim matches."""

import csv

import pytest

from gpuarena.data import catalog, evidence
from gpuarena.errors import UserError
from gpuarena.workloads import registry


def test_every_micro_ceiling_parses_with_its_source_and_names_a_catalog_gpu():
    rows = evidence.micro_ceilings()
    assert len(rows) >= 10
    for r in rows:
        catalog.match(r.gpu)
        assert registry.fact(r.workload, "device_figure"), r
        assert r.source and r.engine and r.value > 0 and r.gpus >= 1 and r.algorithm in evidence.REGIMES
    assert {r.algorithm for r in rows if r.workload == "allreduce"} == {"nvls", "ring"}


def test_every_pcie_link_parses_once_with_its_source():
    links = evidence.pcie_links()
    assert [link.gen for link in links] == [3, 4, 5]
    assert all(link.source and link.x16_gbs_per_direction > 0 for link in links)


def _edited(tmp_path, original, field: str, value: str, row: int = 0):
    """A copy of the shipped file with one field of its row-th data row (line row + 2) set to value."""
    with open(original, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        names, rows = reader.fieldnames, list(reader)
    rows[row][field] = value
    path = tmp_path / original.name
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=names)
        w.writeheader()
        w.writerows(rows)
    return path


@pytest.mark.parametrize("field,value,match", [
    ("source", "", r"micro_ceilings.csv line 2: source is empty"),
    ("source", "   ", r"micro_ceilings.csv line 2: source is empty"),
    ("engine", "", r"line 2: engine is empty"),
    ("value", "773,3", r"line 2: value '773,3' is not a number"),
    ("value", "", r"line 2: value is empty"),
    ("value", "-773.3", r"line 2: value '-773.3' must be a finite positive number"),
    ("value", "inf", r"line 2: value 'inf' must be a finite positive number"),
    ("gpus", "1.5", r"line 2: gpus '1.5' is not a whole number"),
    ("algorithm", "sharp", r"line 2: algorithm 'sharp' is not one of nvls, ring"),
    ("workload", "", r"line 2: workload is empty"),
])
def test_a_malformed_micro_ceiling_is_refused_with_its_file_and_line(tmp_path, field, value, match):
    with pytest.raises(UserError, match=match):
        evidence.micro_ceilings(_edited(tmp_path, evidence.MICRO_CSV, field, value))


def test_a_micro_ceilings_file_without_a_column_is_refused(tmp_path):
    bad = tmp_path / "micro_ceilings.csv"
    bad.write_text("workload,gpu,precision,value,unit,gpus,engine,source\nmembw,H200,,4000,GB/s,1,x,y\n",
                   encoding="utf-8")
    with pytest.raises(UserError, match="micro ceilings .*micro_ceilings.csv: missing column.*algorithm"):
        evidence.micro_ceilings(bad)


@pytest.mark.parametrize("field,value,row,match", [
    ("x16_gbs_per_direction", "fast", 0, r"pcie_links.csv line 2: x16_gbs_per_direction 'fast' is not a number"),
    ("gen", "3", 1, r"pcie_links.csv line 3: PCIe gen 3 is given twice"),
    ("gen", "", 0, r"line 2: gen is empty"),
    ("source", "", 0, r"line 2: source is empty"),
])
def test_a_malformed_pcie_link_is_refused_with_its_file_and_line(tmp_path, field, value, row, match):
    with pytest.raises(UserError, match=match):
        evidence.pcie_links(_edited(tmp_path, evidence.PCIE_CSV, field, value, row))


def test_every_model_ceiling_parses_with_its_source_and_names_a_catalog_gpu_and_a_workload():
    rows = evidence.model_ceilings()
    assert len(rows) >= 25
    for r in rows:
        catalog.match(r.gpu)
        registry.get(r.workload)
        assert r.source and r.engine and r.items_per_s > 0
        # an MLPerf submission or TensorRT is a tuned engine: its figure rejects, a framework's only warns
        assert (r.engine_class == "tuned") == any(k in r.engine for k in ("MLPerf", "TensorRT", "MXNet + DALI"))
    sd = [r for r in rows if r.throughput is None]
    assert sd and all(r.items_per_s == pytest.approx((r.batch_size or 1) / r.latency_s) for r in sd)


@pytest.mark.parametrize("field,value,row,match", [
    ("source", "", 0, r"ceilings.csv line 2: source is empty"),
    ("precision", "", 0, r"ceilings.csv line 2: precision is empty"),
    ("throughput", "1055,78", 0, r"line 2: throughput '1055,78' is not a number"),  # noqa: RUF001 - a comma
    ("throughput", "0", 0, r"line 2: throughput '0' must be a finite positive number"),
    ("throughput", "", 0, r"line 2: give a throughput or a latency_s"),
    ("batch_size", "51.2", 0, r"line 2: batch_size '51.2' is not a whole number"),
    ("latency_s", "nan", 13, r"line 15: latency_s 'nan' must be a finite positive number"),
    ("engine_class", "fast", 0, r"line 2: engine_class 'fast' is not one of tuned, framework"),
    ("engine_class", "", 0, r"line 2: engine_class is empty"),
])
def test_a_malformed_model_ceiling_is_refused_with_its_file_and_line(tmp_path, field, value, row, match):
    with pytest.raises(UserError, match=match):
        evidence.model_ceilings(_edited(tmp_path, evidence.CEILINGS_CSV, field, value, row))
