"""A measurement never vanishes (issue 27, item 1): what the store writes, it reads back.

One validation (store.rows.validated) runs on the way in and on the way out.  A noisy
2-repeat interval is legitimately enormous: stored, shown, marked low-confidence.  A case
whose result could not be stored is refused before it is measured; a measured result the
store still refuses is kept in a file, with one line saying where."""

from __future__ import annotations

import json
import os

import pytest

from tests.procs import gp, gp_batch, one_line_error
from tests.workloads.plugins import install

# Repeat 1 returns at once, repeat 2 sleeps 300 ms: the log-scale t-interval of two repeats (t = 12.7)
# spans (ratio)^6.35 around the geometric mean: 5e12 at a ratio of 100, and still above 1e3 on a machine
# so loaded that the quick repeat takes 100 ms (the test asserts only what holds at any load).
NOISY = '''
    class Noisy(Base):
        name = "toy-noisy"

        def step(self):
            self.calls += 1    # call 1 is the untimed first step, 2 and 3 the two timed repeats
            time.sleep(0 if self.calls == 2 else 0.3)


    class BadExtra(Base):
        name = "toy-bad-extra"

        def extra(self):
            return {"world_size": 0}    # the stored Result says world_size >= 1
'''
ENTRIES = {"toy-noisy": "Noisy", "toy-bad-extra": "BadExtra"}
ONE = ("--set", "repeats=2", "--set", "steps=1", "--set", "warmup=0", "-q")


def test_a_two_repeat_interval_is_kept_and_marked(tmp_path):
    env = install(tmp_path / "site", NOISY, ENTRIES)
    db = str(tmp_path / "r.db")
    # run and read back in one new interpreter that finds the plugin (see tests.procs.gp_batch)
    run, shown, table = gp_batch(("run", "-w", "toy-noisy", "--db", db, *ONE), ("results", "--db", db, "-f", "json"),
                                 ("results", "--db", db, {"COLUMNS": "250"}), cwd=str(tmp_path), env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "fail validation" not in run.stderr and "skipped" not in run.stderr, run.stderr
    assert shown.returncode == 0 and "fail validation" not in shown.stderr, shown.stderr
    rows = json.loads(shown.stdout)
    assert len(rows) == 1 and rows[0]["status"] == "ok"
    thr = rows[0]["throughput"]
    assert thr["n"] == 2 and thr["ci95_high"] > 1e3 * thr["median"]   # huge, and kept
    assert "few repeats" in table.stdout, table.stdout


@pytest.mark.parametrize("label,says", [("x" * 501, "longer than 500"), ("a\x1b[2Jb", "control character")],
                         ids=["long", "escape"])
def test_a_case_whose_result_cannot_be_stored_is_not_measured(tmp_path, label, says):
    env = install(tmp_path / "site", NOISY, ENTRIES)
    db = str(tmp_path / "r.db")
    p = gp("run", "-w", "toy-noisy", "--set", f"label={label}", "--db", db, *ONE, cwd=str(tmp_path), env=env)
    one_line_error(p, says="nothing was measured")
    assert says in p.stderr and "params.label" in p.stderr and not os.path.exists(db)


def test_a_measured_result_the_store_refuses_is_kept_in_a_file(tmp_path):
    env = install(tmp_path / "site", NOISY, ENTRIES)
    db = str(tmp_path / "r.db")
    p = gp("run", "-w", "toy-bad-extra", "--db", db, *ONE, cwd=str(tmp_path), env=env)
    assert "cannot be stored (extra.world_size" in p.stderr and "it is kept in " in p.stderr, p.stderr
    kept = p.stderr.split("it is kept in ", 1)[1].split()[0]
    with open(kept) as f:
        result = json.load(f)
    assert result["workload"] == "toy-bad-extra" and result["status"] == "ok"
    assert result["throughput_median"] > 0           # the measurement itself, not a stub
