"""The report reads the store once and hands rows to its sections (issue 24 item 2): gather builds
one Pool (the typed rows and their environments); no section takes the Store or asks it for rows,
and the sections give the same report from a Pool as from the Store itself."""

from __future__ import annotations

import ast
from pathlib import Path

from gpuarena.report.build import gather
from gpuarena.report.markdown import render as markdown
from gpuarena.store.db import Store
from gpuarena.store.pool import Pool

REPORT = Path(__file__).parents[2] / "src" / "gpuarena" / "report"
HOLDS_THE_STORE = ("build.py", "html.py")   # gather reads the pool; html writes the file beside the db


def store_uses(source: str) -> list[str]:
    """Functions that take a parameter named store, and calls of store.results/.environment/.run."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            found += [f"line {node.lineno}: {node.name}(store)" for a in params if a.arg == "store"]
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "store"
              and node.attr in ("results", "environment", "run", "conn")):
            found.append(f"line {node.lineno}: store.{node.attr}")
    return found


def test_the_guard_sees_a_section_that_reads_the_store():
    assert len(store_uses("def s(store, rows):\n    return store.results(status='ok')\n")) == 2
    assert store_uses("def s(pool, rows):\n    return pool.results(status='ok')\n") == []


def test_no_section_takes_the_store():
    offenders = {str(p.relative_to(REPORT)): found for p in sorted(REPORT.rglob("*.py"))
                 if p.name not in HOLDS_THE_STORE and (found := store_uses(p.read_text()))}
    assert not offenders, f"a section is a function of rows: hand it the pool gather read: {offenders}"


def test_a_pool_answers_as_the_store_does(report_db):
    store = Store(report_db, readonly=True)
    pool = Pool.read(store)
    assert pool.rows == tuple(store.results())
    for kw in ({}, {"status": "ok"}, {"workload": "resnet50-train"}, {"source": "published"},
               {"run_ids": [pool.rows[0].run_id], "status": "ok"}):
        assert pool.results(**kw) == store.results(**kw), kw
    ids = {r.env_id for r in pool.rows if r.env_id is not None}
    assert ids and all(pool.environment(i) == store.environment(i) for i in ids)
    assert pool.environment(10**9) is None


def test_the_sections_read_nothing_more_from_the_database(report_db):
    """After Pool.read, gather's sections issue no query for results or environments: the
    report is a function of the rows read once."""
    store = Store(report_db, readonly=True)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    text = markdown(gather(store))
    reads = [s for s in statements if "FROM results" in s or "FROM environments" in s]
    n_envs = len({r.env_id for r in store.results() if r.env_id is not None})
    assert len(reads) == 1 + n_envs, reads     # the table once, each environment once
    assert "Comparison with" in text
