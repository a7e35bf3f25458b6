"""A process that wrote its result and then exited non-zero (gloo's teardown race under
torchrun aborts a rank now and then) keeps its measurement, with a warning and the stderr
tail; one that exits non-zero before writing a result is stored as crashed."""

from __future__ import annotations

import json
import sys

from gpuarena.runner.executor import run_command
from gpuarena.spec.model import Case

CASE = Case(workload="matmul", variant="seed", params={}, repeats=2, warmup=0, steps=1, timeout_s=60)


def _script(write: bool, code: int) -> str:
    result = {"status": "ok", "throughput_median": 1.0, "warnings": [], "extra": {}}
    write_it = f"json.dump({result!r}, open(sys.argv[1], 'w'))\n" if write else ""
    return ("import json, sys\n" + write_it
            + "print('terminate called after throwing an instance of gloo::IoException', file=sys.stderr)\n"
            + f"sys.exit({code})\n")


def test_non_zero_exit_after_the_result_keeps_it(tmp_path):
    out = str(tmp_path / "result.json")
    r = run_command([sys.executable, "-c", _script(True, 3), out], CASE, str(tmp_path), out)
    assert r["status"] == "ok" and r["throughput_median"] == 1.0
    assert r["warnings"] == ["the process exited with code 3 after writing its result (teardown); "
                             "the measurement is complete, the stderr tail is kept"]
    assert "gloo::IoException" in r["extra"]["stderr_tail"]


def test_non_zero_exit_without_a_result_is_crashed(tmp_path):
    out = str(tmp_path / "result.json")
    r = run_command([sys.executable, "-c", _script(False, 3), out], CASE, str(tmp_path), out)
    assert r["status"] == "crashed"
    assert r["error"].startswith("exited with code 3 before writing a result")
    assert json.dumps(r)  # storable as it is
