"""What click itself refuses (a word where a number goes, an unknown option or command, a missing
value) is bad input like any other: one line on stderr and exit code 2, nothing stored.  Help and
--version are not errors and keep their exit code 0; no arguments at all still shows the help."""

from __future__ import annotations

import pytest

from tests.cli.test_hostile_input import invoke, snapshot


@pytest.mark.parametrize("argv,says", [
    (("check", "--gpu", "H200", "-w", "resnet50-train", "--precision", "bf16", "--batch-size", "2",
      "--throughput", "abc"), "--throughput"),
    (("advise", "-w", "resnet50-train", "--gpus", "two"), "--gpus"),
    (("cost", "--years", "x"), "--years"),
    (("check", "--nosuch"), "--nosuch"),
    (("nosuchcmd",), "nosuchcmd"),
    (("results", "--db"), "--db"),
    (("import", "a.json", "b.json"), "b.json"),
])
def test_a_usage_error_is_one_line_exit_2(capsys, tmp_path, argv, says):
    db = str(tmp_path / "x.db")
    before = snapshot(db)
    code, err = invoke(capsys, *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("gpuarena: error: ") and says in err and "-h" in err, err
    assert snapshot(db) == before


def test_help_version_and_no_arguments_are_unchanged(capsys):
    code, err = invoke(capsys, "-h")
    assert code in (0, None) and "Commands:" in capsys.readouterr().out and not err
    code, err = invoke(capsys, "check", "-h")
    assert code in (0, None) and "--throughput" in capsys.readouterr().out
    code, err = invoke(capsys, "--version")
    assert code in (0, None) and "gpuarena" in capsys.readouterr().out
    code, err = invoke(capsys, )
    assert code == 2 and "Commands:" in err + capsys.readouterr().out
