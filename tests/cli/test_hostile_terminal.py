"""Terminals (issue 27, item 13): an ASCII-only terminal gets '?' for what it cannot show,
never an internal error; bidi controls never reach it (refused in stored names, removed
from messages)."""

from __future__ import annotations

import json

from tests.conftest import gpuarena
from tests.procs import make_bundle, one_line_error


def test_an_ascii_terminal_reads_a_unicode_database_name(tmp_path):
    db = str(tmp_path / "ünï©ødé ℋ.db")
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(make_bundle(3)))
    assert gpuarena("import", str(seed), "--db", db, cwd=str(tmp_path)).returncode == 0
    for args in (["results"], ["results", "-f", "json"], ["report", "-o", str(tmp_path / "r.md"), "-f", "md"]):
        p = gpuarena(*args, "--db", db, cwd=str(tmp_path), env={"PYTHONIOENCODING": "ascii"})
        assert p.returncode == 0 and "internal error" not in p.stderr, p.stderr
    assert "matmul" in p.stdout or (tmp_path / "r.md").exists()


def test_a_bidi_control_in_a_name_never_reaches_the_terminal(tmp_path):
    p = gpuarena("run", "-w", "mat\u202emul", "--db", str(tmp_path / "x.db"), cwd=str(tmp_path))
    err = one_line_error(p, 2, "unknown workload")
    assert "\u202e" not in err
