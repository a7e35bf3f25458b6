"""The run session (runner/plan.py, runner/session.py) without the CLI: plan, open, run, resume."""

from __future__ import annotations

import pytest

from gpuarena.errors import UserError
from gpuarena.runner import session as S
from gpuarena.runner.plan import plan_new, plan_resume
from gpuarena.store.db import Store


def test_plan_sizes_an_adhoc_run_for_the_device_and_refuses_what_it_cannot_plan():
    plan = plan_new(None, ["matmul"], [], ["dtype=fp32"], None, 2, None, "cpu", None)
    assert plan.suite_name == "adhoc" and plan.run_id is None and plan.todo == plan.cases
    assert [(c.size, c.params["dtype"], c.repeats) for c in plan.cases] == [("tiny", "fp32", 2)]
    assert "CPU default" in plan.size_note
    with pytest.raises(UserError, match="--variant selects variants of --workload"):
        plan_new("smoke", [], ["seed"], [], None, None, None, "cpu", None)
    with pytest.raises(UserError, match="--repeats 0"):
        plan_new(None, ["matmul"], [], [], None, 0, None, "cpu", None)
    with pytest.raises(UserError, match="suite smoke has no entry for workload 'matmull'"):
        plan_new("smoke", ["matmull"], [], [], None, None, None, "cpu", None)


def test_a_session_stores_its_run_and_a_resume_finds_nothing_left(tmp_path):
    path = str(tmp_path / "s.db")
    opened = []

    def opener():
        opened.append(Store(path))
        return opened[-1]

    plan = plan_new(None, ["membw"], [], ["size_mb=1"], None, 2, None, "cpu", None)
    s = S.open_session(plan, False, opener)
    assert len(opened) == 1 and s.warnings == [] and s.device_name
    seen = []
    finished = S.run(s, None, lambda i, outcome: seen.append(outcome.result["status"]))
    assert seen == ["ok"] and [r.status for r in finished.stored] == ["ok"] and not finished.elsewhere_only
    store = Store(path)
    assert store.run(s.run_id)["status"] == "complete"
    again = plan_resume(store, s.run_id)
    assert again.todo == [] and again.info == [f"resuming run {s.run_id}: 1 of 1 cases already stored"]
