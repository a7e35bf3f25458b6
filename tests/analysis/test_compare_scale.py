"""compare and the report's comparison at thousands of distinct cases (issue 40): each result meets only the
baseline rows of its own case (10,000 distinct cases took 53 s when every result met every baseline row), and
the report's table is bounded (50,000 rows made a 44 MB page) and says how to get every row."""

from __future__ import annotations

import pytest

from gpuarena.analysis.verbs import compare as C
from gpuarena.report import comparison as RC
from gpuarena.store.db import Store
from gpuarena.store.pool import Pool
from tests.analysis.conftest import result

A100, H100, V100 = "NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3", "NVIDIA V100-SXM2-32GB"
CASES = 1500          # distinct parameter sets, each on the A100 and the H100: 3,000 results
SKIPPED = RC.MAX_SKIPPED + 10


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """1,500 distinct ResNet-50 batch sizes on two GPUs, and 60 V100 results of another workload version (not
    comparable), stored through the Store's own add path."""
    s = Store(str(tmp_path_factory.mktemp("many") / "many.db"))
    for i in range(CASES):
        s.add_result(result(A100, 8 + i, [0.100, 0.101, 0.099]))
        s.add_result(result(H100, 8 + i, [0.050, 0.0505, 0.0495]))
    for i in range(SKIPPED):
        s.add_result(result(V100, 8 + i, [0.200, 0.201, 0.199], workload_version=2))
    yield s
    s.close()


def counting(monkeypatch) -> list:
    """Counts the pairs (baseline row, other row) compare holds side by side."""
    calls, inner = [], C._same_config
    monkeypatch.setattr(C, "_same_config", lambda b, o: calls.append(1) or inner(b, o))
    return calls


def test_each_result_meets_only_its_own_case(many, monkeypatch):
    calls = counting(monkeypatch)
    out = C.compare(many, "A100 40GB SXM4")
    assert len(out.rows) == CASES and len(out.skipped) == SKIPPED
    assert all(r.ratio == pytest.approx(2.0) for r in out.rows)
    # one pair per other result (1,560), where every result against every baseline row is 2,340,000
    assert len(calls) == CASES + SKIPPED
    (h100,) = [x for x in out.summary if x.gpu == "NVIDIA H100 80GB SXM5"]
    assert h100.n == CASES and h100.faster == CASES


def test_the_reports_comparison_is_bounded_and_says_how_to_get_every_row(many, monkeypatch):
    calls = counting(monkeypatch)
    pool = Pool.read(many)
    s = RC.comparison(pool, pool.rows, "A100 40GB SXM4")
    assert len(calls) == CASES + SKIPPED
    summary, table = s.tables
    assert len(table.rows) == RC.MAX_ROWS
    assert [row for row in summary.rows if row[0] == "H100 80GB SXM5"] == [
        ["H100 80GB SXM5", "1500", "2.000x", "1500", "0", "0"]]           # the summary counts every row
    note = [p for p in s.paragraphs if p.startswith("The table shows")]
    assert note == [f"The table shows the first {RC.MAX_ROWS} of 1,500 compared rows (1,000 left out here; the "
                    "summary above counts them all); `gpuarena compare --baseline \"NVIDIA A100 40GB SXM4\" "
                    "--format md` lists every row."]
    assert sum(p.startswith("Not compared:") for p in s.paragraphs) == RC.MAX_SKIPPED
    assert f"{SKIPPED - RC.MAX_SKIPPED:,} more configurations not compared; " in " ".join(s.paragraphs)
    assert s.data["gpus"] == ["H100 80GB HBM3"] or len(s.data["gpus"]) == 1   # each GPU once, not per row


def test_the_reports_workload_and_expected_tables_are_bounded(many):
    """The other long tables of a 3,060-result report: the workload's results and the expected figures show
    at most MAX_ROWS rows each and say how many they left out and which command lists them all."""
    from gpuarena.report import fleet_section
    from gpuarena.report.model import MAX_ROWS
    from gpuarena.report.workload_sections import workload_section

    pool = Pool.read(many)
    rows = [r for r in pool.rows if r.workload == "resnet50-train"]
    s = workload_section("resnet50-train", rows)
    assert len(s.tables[0].rows) == MAX_ROWS
    assert any(f"{len(rows) - MAX_ROWS:,} left out here" in p and "gpuarena results -w resnet50-train" in p
               for p in s.paragraphs)
    normal = fleet_section.section(pool, rows)
    assert normal is not None and len(normal.tables[0].rows) <= MAX_ROWS
    assert any("left out here" in p and "gpuarena results --format json" in p for p in normal.paragraphs)
