"""Import and result identities (issue 27, item 11): a uid names one measurement.  The same
result imported again is skipped as already present; two different measurements under one
uid (in the bundle, or against the database) refuse the bundle whole with one line."""

from __future__ import annotations

import json

from tests.store.test_hostile_bundles import bundle, cli, result, tables


def _import(tmp_path, capsys, b: dict, db: str, name: str = "b.json"):
    path = tmp_path / name
    path.write_text(json.dumps(b))
    return cli(capsys, "import", str(path), "--db", db)


def test_the_same_result_again_is_already_present(tmp_path, capsys):
    db = str(tmp_path / "a.db")
    b = bundle([result(1, uid="u1"), result(2, uid="u2"), result(1, uid="u1")])
    code, out, err = _import(tmp_path, capsys, b, db)
    assert code in (0, None) and tables(db)[0] == 2, err
    code, out, err = _import(tmp_path, capsys, b, db, "again.json")
    assert code in (0, None) and "already present" in out and tables(db)[0] == 2, (out, err)


def test_one_uid_for_two_measurements_in_a_bundle_is_refused(tmp_path, capsys):
    db = str(tmp_path / "a.db")
    b = bundle([result(1, uid="u1"), result(2, uid="u1")])
    code, out, err = _import(tmp_path, capsys, b, db)
    assert code == 2 and err.count("\n") == 1 and "results.1 and results.0 share uid 'u1'" in err, err
    assert tables(db) == (0, 0, 0)


def test_a_uid_stored_with_other_figures_is_refused(tmp_path, capsys):
    db = str(tmp_path / "a.db")
    assert _import(tmp_path, capsys, bundle([result(1, uid="u1")]), db)[0] in (0, None)
    other = result(1, uid="u1", throughput_median=9999.0, throughput={"n": 3, "median": 9999.0, "mean": 9999.0})
    code, out, err = _import(tmp_path, capsys, bundle([other, result(2, uid="u2")]), db, "other.json")
    assert code == 2 and err.count("\n") == 1 and "stored already (result 1) with other figures" in err, err
    assert tables(db)[0] == 1
