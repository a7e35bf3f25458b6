"""The decision verbs as a user runs them: known answers in JSON, bad input exit 2 with one line."""

import json

import pytest


@pytest.fixture
def nodb(tmp_path):
    """No database: the default path points at a file that does not exist (a named --db must exist)."""
    return {"GPUARENA_DB": str(tmp_path / "absent.db")}


def test_check_json_gives_flops_and_assumptions(cli, nodb):
    p = cli("check", "--gpu", "A100 40GB SXM4", "-w", "bert-large-infer", "--precision", "fp16",
            "--batch-size", "128", "--seq-len", "128", "--throughput", "2480", "--format", "json", env=nodb)
    assert p.returncode == 0, p.stderr
    row = json.loads(p.stdout)[0]
    assert row["verdict"] == "plausible" and row["params"]["seq_len"] == 128
    assert row["flops_per_item"] > 0 and row["executed_as"] and row["ceiling"]["source"]


def test_ratio_claim_and_validate(cli, nodb):
    p = cli("check", "-w", "resnet50-train", "--gpu", "A800 40GB SXM4", "--vs", "A100 40GB SXM4",
            "--ratio", "0.878", "--batch-size", "256", "--precision", "default", "--format", "json", env=nodb)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)[0]["verdict"] == "implausible"
    v = cli("advise", "--validate", "--format", "json")
    d = json.loads(v.stdout)
    assert set(d) >= {"n", "median_abs_pct_error", "spearman", "worst"}


@pytest.mark.parametrize("args", [
    ("check", "--gpu", "H200", "-w", "resnet50-train", "--precision", "default", "--batch-size", "256",
     "--throughput", "nan"),
    ("check", "--gpu", "H200", "-w", "resnet50-train", "--precision", "fp9", "--batch-size", "256",
     "--throughput", "10"),
    ("check", "-w", "resnet50-train", "--gpu", "A800 40GB SXM4", "--vs", "A100 40GB SXM4", "--ratio", "-1"),
    ("whatif", "-w", "resnet50-train", "--gpu", "H200", "--throughput", "0"),
    ("whatif", "-w", "resnet50-train", "--gpu", "H200", "--throughput", "inf"),
    ("whatif", "-w", "resnet50-train", "--gpu", "H200", "--throughput", "100", "--batch-size", "-4"),
])
def test_bad_numbers_exit_2(cli, nodb, args):
    p = cli(*args, env=nodb)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "does not exist" not in p.stderr
