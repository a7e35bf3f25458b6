"""`run`'s progress lines tell a plan's cases apart: each names the parameters that vary (issue 40, Low)."""

from __future__ import annotations


def test_each_progress_line_names_what_varies(tmp_path, cli):
    r = cli("run", "-w", "matmul", "--set", "dtype=fp32", "--set", "m=32,48", "--repeats", "2", "-q",
            "--db", str(tmp_path / "g.db"), cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    lines = [ln[10:].split("  ")[0] for ln in (r.stderr + r.stdout).splitlines() if ln.startswith("  ok")]
    assert lines == ["matmul [seed] dtype=fp32 m=32", "matmul [seed] dtype=fp32 m=48"], lines
