"""Export/import round trip; malformed bundles refused whole with nothing written."""

from __future__ import annotations

import copy
import json

import pytest

from gpuarena.errors import UserError
from gpuarena.store import bundle as B
from gpuarena.store.db import Store
from tests.analysis import conftest as analysis

store = analysis.store     # the fixture: tests/analysis's small stored set (two A100s and an A800)


def _count(store):
    return store.conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]


def test_round_trip_and_no_duplicates(store, tmp_path):
    store.add_result({**store.results()[0].row(), "env_id": store.env_id({"host": "m1", "gpu": "A100"})})
    path = str(tmp_path / "b.json")
    B.write(B.export(store), path)
    other = Store(str(tmp_path / "other.db"))
    out = B.import_bundle(other, path)
    assert out["imported"] == 6 and out["skipped_duplicates"] == 0
    rows = other.results()
    assert {r.source for r in rows} == {"imported"} and all(r.run_id == out["run_id"] for r in rows)
    assert rows[0].samples == store.results()[0].samples
    assert other.environment(rows[-1].env_id) == {"host": "m1", "gpu": "A100"}
    again = B.import_bundle(other, path)
    assert again["imported"] == 0 and again["skipped_duplicates"] == 6 and _count(other) == 6


def _bad(store, tmp_path, mutate, match):
    good = B.export(store)
    data = copy.deepcopy(good)
    mutate(data)
    path = tmp_path / "bad.json"
    text = json.dumps(data) if not isinstance(data, str) else data
    path.write_text(text)
    target = Store(str(tmp_path / "t.db"))
    before = _count(target)
    with pytest.raises(UserError, match=match):
        B.import_bundle(target, str(path))
    assert _count(target) == before == 0
    assert target.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


@pytest.mark.parametrize("mutate,match", [
    (lambda d: d.update(version=2), "version 2 is not supported"),
    (lambda d: d.update(format="other"), "not a gpuarena bundle"),
    (lambda d: d["results"][-1].update(throughput_median=-5.0), "throughput_median"),
    (lambda d: d["results"][-1].update(throughput_median=1e15), "throughput_median"),
    (lambda d: d["results"][-1].update(status="great"), "status"),
    (lambda d: d["results"][-1].update(workload="x" * 500), "workload"),
    (lambda d: d["results"][-1].update(samples=[0.1, -1.0]), "sample"),
    (lambda d: d["results"][-1].pop("case_key"), "case_key"),
    (lambda d: d["results"][-1].update(gpus="four"), "gpus"),
    (lambda d: d["results"][-1].update(env_id=999), "env_id"),
    (lambda d: d["results"][-1].update(source="published"), "source"),
])
def test_malformed_bundle_refused_whole(store, tmp_path, mutate, match):
    _bad(store, tmp_path, mutate, match)


def test_nan_and_garbage_refused(store, tmp_path):
    path = tmp_path / "nan.json"
    text = json.dumps(B.export(store)).replace('"throughput_median": ', '"throughput_median": NaN, "x": ', 1)
    path.write_text(text)
    target = Store(str(tmp_path / "t.db"))
    with pytest.raises(UserError, match="not a JSON bundle"):
        B.import_bundle(target, str(path))
    path.write_text("{not json")
    with pytest.raises(UserError, match="not a JSON bundle"):
        B.import_bundle(target, str(path))
    assert _count(target) == 0


def test_cli_import_refusal_exit_2(cli, tmp_path):
    p = tmp_path / "b.json"
    p.write_text(json.dumps({"format": "gpuarena-bundle", "version": 1, "environments": [],
                             "results": [{"id": 1}]}))
    db = tmp_path / "c.db"
    r = cli("import", str(p), "--db", str(db))
    assert r.returncode == 2 and "refused, nothing imported" in r.stderr and len(r.stderr.splitlines()) == 1
    assert not db.exists()
