"""Plugins isolated (issue 27, item 5): nothing a workload plugin does at import ends or
corrupts a command.  sys.exit, KeyboardInterrupt, an invalid class, a print at import,
escape codes in its texts: the plugin is left out (or its texts cleaned) with one
warning line, and the command does its work."""

from __future__ import annotations

import json

import pytest

from tests.procs import gp
from tests.workloads.plugins import install

GOOD = '''
    class Good(Base):
        name = "toy-good"
        description = "fine \\x1b[2J\\u202eevil[/] [red]markup"
        variants = {"seed": "plain \\x1b]0;title\\x07"}
'''

BAD = {
    "exit": ('import sys\nsys.exit(0)\n', "SystemExit"),
    "interrupt": ('raise KeyboardInterrupt\n', "KeyboardInterrupt"),
    "noisy": ('print("hello from a plugin")\nclass Noisy(Base):\n    name = "toy-noisy"\n', None),
    "variants-none": ('class V(Base):\n    name = "toy-variants-none"\n    variants = None\n', "variants=None"),
    "params-str": ('class P(Base):\n    name = "toy-params-str"\n    params = "abc"\n', "params='abc'"),
    # the serving curves call each predicate: a table of anything else is refused when loaded
    "changes-str": ('class C(Base):\n    name = "toy-changes-str"\n    version_changes = {2: "all"}\n',
                    "version_changes={2: 'all'}"),
}
TARGET = {"exit": "Good", "interrupt": "Good", "noisy": "Noisy", "variants-none": "V", "params-str": "P",
          "changes-str": "C"}


def _env(tmp_path, case: str) -> dict:
    body, _ = BAD[case]
    env = install(tmp_path / "good", GOOD, {"toy-good": "Good"}, package="good_plugin")
    bad = install(tmp_path / "bad", body, {f"toy-{case}": TARGET[case]}, package="bad_plugin")
    env["PYTHONPATH"] = env["PYTHONPATH"] + ":" + bad["PYTHONPATH"].split(":", 1)[1]
    return env


@pytest.mark.parametrize("case", list(BAD))
def test_a_hostile_plugin_is_left_out_and_list_still_works(tmp_path, case):
    env = _env(tmp_path, case)
    p = gp("list", "-f", "json", cwd=str(tmp_path), env=env)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)                     # stdout is JSON, whatever the plugin printed
    names = {w["name"] for w in data["workloads"]}
    assert "toy-good" in names and "matmul" in names
    good = next(w for w in data["workloads"] if w["name"] == "toy-good")
    assert "\x1b" not in good["description"] and "\u202e" not in good["description"]
    assert "\x1b" not in good["variants"]["seed"]
    says = BAD[case][1]
    if says is None:
        assert "toy-noisy" in names and "hello from a plugin" in p.stderr
    else:
        assert f"toy-{case}" not in names
        assert f"'toy-{case}' left out" in p.stderr and says in p.stderr, p.stderr


def test_table_output_carries_no_escape_and_no_markup(tmp_path):
    env = _env(tmp_path, "exit")
    p = gp("list", cwd=str(tmp_path), env=env)
    assert p.returncode == 0 and "\x1b" not in p.stdout and "\u202e" not in p.stdout
    assert "[red]markup" in p.stdout                  # shown as the text it is


def test_a_plugin_that_exits_at_import_does_not_end_run_or_report(tmp_path, db):
    env = _env(tmp_path, "exit")
    p = gp("run", "-w", "typo", "--db", str(tmp_path / "x.db"), cwd=str(tmp_path), env=env)
    assert p.returncode == 2 and "unknown workload 'typo'" in p.stderr, p.stderr
    out = tmp_path / "r.md"
    p = gp("report", "--db", db, "-o", str(out), "-f", "md", cwd=str(tmp_path), env=env)
    assert p.returncode == 0 and out.read_text().startswith("#"), p.stderr


def test_a_name_that_could_not_be_stored_is_left_out(tmp_path):
    env = install(tmp_path / "site", '\nclass Named(Base):\n    name = "a+b,c"\n', {"a+b,c": "Named"})
    p = gp("list", "-f", "json", cwd=str(tmp_path), env=env)
    assert p.returncode == 0 and "a+b,c" not in {w["name"] for w in json.loads(p.stdout)["workloads"]}
    assert "'a+b,c' left out" in p.stderr
