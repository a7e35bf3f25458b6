"""A run's stored plan edited by hand, and the memory cap (issue 27, item 14): `--resume`
checks the plan as planning checks a suite (bounds, parameters), a plan that is not JSON is
one line, and a memory cap no case could run under is refused before the run."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from tests.conftest import gpuarena
from tests.procs import TINY_RUN, one_line_error


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("plan")
    db = str(tmp / "r.db")
    p = gpuarena(*TINY_RUN, "--db", db, cwd=str(tmp))
    assert p.returncode == 0, p.stderr[-2000:]
    return db


def _edited(tmp_path, db: str, edit) -> tuple[str, str]:
    copy = str(tmp_path / "edited.db")
    with sqlite3.connect(db) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    conn = sqlite3.connect(copy)
    run_id, plan = conn.execute("SELECT id, plan FROM runs").fetchone()
    conn.execute("DELETE FROM results")
    conn.execute("UPDATE runs SET plan = ?, status = 'interrupted'", (edit(plan),))
    conn.commit()
    conn.close()
    return copy, run_id


def _case(**over):
    def edit(plan: str) -> str:
        cases = json.loads(plan)
        for c in cases:
            for k, v in over.items():
                if k in c:
                    c[k] = v
                else:
                    c["params"][k] = v
        return json.dumps(cases)
    return edit


EDITS = [
    ("not-json", lambda plan: plan[:-3] + "{{", "not JSON"),
    ("not-a-list", lambda plan: '{"a": 1}', "not a list"),
    ("repeats-billion", _case(repeats=1_000_000_000), "repeats"),
    ("timeout-negative", _case(timeout_s=-1), "timeout_s"),
    ("m-negative", _case(m=-5), "m"),
    ("unknown-workload", _case(workload="zzz"), "unknown workload"),
]


@pytest.mark.parametrize("edit,says", [e[1:] for e in EDITS], ids=[e[0] for e in EDITS])
def test_a_hand_edited_plan_is_refused_on_resume(tmp_path, finished, edit, says):
    db, run_id = _edited(tmp_path, finished, edit)
    p = gpuarena("run", "--resume", run_id, "--db", db, cwd=str(tmp_path))
    one_line_error(p, 2, says)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0
    conn.close()


@pytest.mark.parametrize("cap", ["0.5", "63"])
def test_a_memory_cap_no_case_can_run_under_is_refused(tmp_path, cap):
    db = str(tmp_path / "r.db")
    p = gpuarena(*TINY_RUN, "--db", db, cwd=str(tmp_path), env={"GPUARENA_MEMORY_CAP_MB": cap})
    one_line_error(p, 2, "GPUARENA_MEMORY_CAP_MB")
    assert not os.path.exists(db)
