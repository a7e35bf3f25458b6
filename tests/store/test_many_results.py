"""`results` and `report` scale with the number of stored results (issue 27, item 6): on
generated rows, what each command does grows linearly.  Asserted on work counted, never on
time: the number of Python function calls at n and 2n rows, the rows validated per command,
and the results table measured without being drawn."""

from __future__ import annotations

import cProfile
import pstats

import pytest

from gpuarena import textfit
from gpuarena.cli import main
from gpuarena.store import bundle as B
from gpuarena.store import rows as store_rows
from gpuarena.store.db import Store
from tests.procs import many_results


def _db(tmp_path, n: int) -> str:
    path = tmp_path / f"{n}.json"
    import json

    path.write_text(json.dumps(many_results(n)))
    db = str(tmp_path / f"{n}.db")
    store = Store(db)
    B.import_bundle(store, str(path))
    store.close()
    return db


def _calls(argv: list[str], capsys) -> int:
    """Python function calls one in-process command makes (its imports done before)."""
    prof = cProfile.Profile()
    prof.enable()
    try:
        main(argv)
    except SystemExit as exc:
        assert exc.code in (0, None), capsys.readouterr().err
    finally:
        prof.disable()
    capsys.readouterr()
    return pstats.Stats(prof).total_calls


@pytest.mark.parametrize("verb", ["results", "report"])
def test_work_grows_linearly_with_the_rows(tmp_path, capsys, verb):
    small, large = _db(tmp_path, 600), _db(tmp_path, 1200)

    def argv(db):
        return [verb, "--db", db] + (["-o", str(tmp_path / "r.html")] if verb == "report" else [])

    _calls(argv(small), capsys)                       # imports, caches: paid once, not per row
    ratio = _calls(argv(large), capsys) / _calls(argv(small), capsys)
    assert ratio < 2.3, f"{verb}: twice the rows cost {ratio:.2f}x the calls"


@pytest.mark.parametrize("verb", ["results", "report"])
def test_each_row_is_validated_once_per_command(tmp_path, capsys, monkeypatch, verb):
    db = _db(tmp_path, 1500)
    seen = []
    real = store_rows.validated
    monkeypatch.setattr("gpuarena.store.db.validated", lambda d, **kw: seen.append(d["id"]) or real(d, **kw))
    args = [verb, "--db", db] + (["-o", str(tmp_path / "r.html")] if verb == "report" else [])
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code in (0, None)
    assert len(seen) == 1500 == len(set(seen))


def test_the_results_table_is_measured_not_drawn(tmp_path, capsys, monkeypatch):
    db = _db(tmp_path, 1500)
    drawn = []
    real = textfit.rendered_width
    monkeypatch.setattr(textfit, "rendered_width", lambda t: drawn.append(t.row_count) or real(t))
    for columns in ("80", "300"):                     # folded into records, and a table that fits
        monkeypatch.setenv("COLUMNS", columns)
        with pytest.raises(SystemExit) as exc:
            main(["results", "--db", db])
        assert exc.value.code in (0, None)
        out = capsys.readouterr().out
        assert out.count("matmul") >= 1125           # every matmul row is printed
    assert drawn and max(drawn) <= 1                  # only one-row probes of the table's style
