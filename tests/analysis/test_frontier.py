"""The serving frontier: every sweep point of real endpoint-serve runs (serve-tiny through the
CLI and the store), drawn by `gpuarena engines` and the report, and its arithmetic by hand."""

from __future__ import annotations

import json

import pytest

from gpuarena.analysis.verbs import frontier as F
from gpuarena.store.db import Store
from tests.workloads import tiny_proc


def test_frontier_keeps_the_points_nothing_beats():
    pts = [F.Point(per_user=u, per_gpu=g, holds=h, at=a) for u, g, h, a in
           [(100, 50, True, "a"), (80, 40, True, "b"), (60, 120, True, "c"), (40, 200, False, "d"),
            (30, 150, False, "e")]]
    assert [p.at for p in F.frontier(pts)] == ["a", "c", "d"]       # b is beaten by a, e by d


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A store holding a rate sweep and a concurrency sweep of serve-tiny, run through the CLI (in this
    process: the sweeps are the point, not a process start)."""
    db = str(tmp_path_factory.mktemp("frontier") / "f.db")
    from tests.conftest import gpuarena

    with tiny_proc.serving([]) as url:
        for sweep in (["rate=sweep", "sweep_start=2", "sweep_max=8", "sweep_refine=0"], ["concurrency=sweep"]):
            sets = [x for s in [f"base_url={url}", "num_requests=6", "slo_tpot_ms=1000", "slo_ttft_ms=5000",
                                "sweep_time_s=120", *sweep] for x in ("--set", s)]
            out = gpuarena("run", "-w", "endpoint-serve", "--size", "tiny", *sets, "--repeats", "1", "--db", db)
            assert out.returncode == 0, out.stderr[-2000:]
    return db


def test_sweeps_store_every_point_and_engines_draws_the_frontier(swept, cli):
    rs = Store(swept).results()
    assert len(rs) == 2
    by = {r.params["rate"] if r.params["rate"] == "sweep" else "concurrency": r for r in rs}
    assert [p["rate"] for p in by["sweep"].extra.sweep["points"]] == [2, 4, 8]
    assert [p["concurrency"] for p in by["concurrency"].extra.sweep["points"]][:3] == [1, 2, 4]
    (curve,) = F.curves(rs)           # one engine, one GPU, one setting: the two sweeps on one curve
    n = sum(len(r.extra.sweep["points"]) + 1 for r in rs)
    assert len(curve.points) == n and curve.best and curve.slo_per_user == 1.0
    assert curve.best.per_gpu == max(p.per_gpu for p in curve.points if p.holds)
    out = cli("engines", "--db", swept)
    assert out.returncode == 0, out.stderr
    assert "Serving frontier" in out.stdout and "best under the SLO:" in out.stdout
    data = json.loads(cli("engines", "--db", swept, "-f", "json").stdout)
    assert len(data["frontier"][0]["points"]) == n


def test_report_draws_the_frontier(swept, cli, tmp_path):
    html = tmp_path / "r.html"
    out = cli("report", "--db", swept, "-o", str(html))
    assert out.returncode == 0, out.stderr
    text = html.read_text()
    assert 'id="endpoint-frontier"' in text and "endpoint-frontier-best" in text
    assert "best under SLO" in text


def test_a_varied_mix_names_its_lengths_and_meets_no_fixed_length_loop(swept):
    from gpuarena.analysis.verbs.endpoints import _lengths, setting

    r = Store(swept).results()[0]
    fixed = r.model_copy(update={"params": {**r.params, "prompt_len": 512, "output_len": 128}})
    chat = r.model_copy(update={"params": {**r.params, "length_dist": "dataset", "prefix_share": 0.3,
                                           "prefix_group": 16}})
    assert _lengths(fixed) == (512, 128) and _lengths(chat) is None
    shown = setting(chat)
    assert "lengths from the shipped chat table, length_dist dataset, prefix_share 0.3, prefix_group 16" in shown
    assert "16 in / 8 out" not in shown
