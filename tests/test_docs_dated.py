"""The documents name a figure by its date, run id and command, never by an internal counter: README.md,
BENCHMARKS.md, docs/*.md and the report's templates and text say no "session 14" (issue 43).  A reader
cannot look up "session 14"; a date, a run id (`gpuarena results --run ID`) and a command they can.
Bundle file names (docs/data/h200-s14-2026-12-02.json) are names, not prose, and stay as they are."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
# "session 14", "Sessions 10-11", "session-3": a device session's number in prose
COUNTER = re.compile(r"\b[Ss]essions? ?-?\d+")


def _documents() -> list[Path]:
    report = ROOT / "src" / "gpuarena" / "report"
    texts = [p for p in sorted(report.rglob("*")) if p.is_file() and p.suffix in {".html", ".j2", ".md", ".txt",
                                                                                  ".css", ".py"}]
    return [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md")), *texts]


def counters(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line that names a figure by a session counter."""
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if COUNTER.search(line)]


def test_the_rule_catches_counters_and_passes_dates():
    caught = "measured in session 14\nSession 3: compiled\nsessions 10-11\nthe session-3 bundle\n(Session 5, two H200s)"
    assert [n for n, _ in counters(caught)] == [1, 2, 3, 4, 5]
    dated = ("## 2026-12-02 14:05 UTC: the aot-inductor rung runs\nrun `20261202-142523-3b51c5`\n"
             "docs/data/h200-s14-2026-12-02.json\none smoke run per session (`smoke_run`)\nan ssh session ends")
    assert counters(dated) == []


def test_documents_name_figures_by_date_not_session():
    docs = _documents()
    assert {"README.md", "BENCHMARKS.md", "llm.md", "claims.md"} <= {p.name for p in docs}
    found = [f"{p.relative_to(ROOT)}:{n}: {line[:120]}" for p in docs for n, line in counters(p.read_text())]
    assert not found, ("name each figure by its date (UTC), run id and command, not by a session counter:\n"
                       + "\n".join(found))
