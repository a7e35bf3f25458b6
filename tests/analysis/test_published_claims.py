"""`gpuarena check` gives every published claim (data/published_claims.csv) the verdict an expert gives it
(issue 22: docs/claims.md holds the table, scripts/claims_table.sh writes it)."""

import contextlib
import csv
import io
import json


from gpuarena.cli import main
from gpuarena.data import evidence


def cli_verdict(claim: evidence.Claim, path) -> str:
    """The verdict of `gpuarena check --csv` on a file holding this one claim, or 'refused: <why>'."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=evidence.CHECK_COLUMNS)
        w.writeheader()
        w.writerow(claim.check_row())
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["check", "--csv", str(path), "--format", "json"])
        except SystemExit as exc:
            if exc.code:
                return "refused: " + err.getvalue().strip()
    return json.loads(out.getvalue())[0]["verdict"]


# Known disagreements, each with its reason (docs/claims.md lists them): MLPerf BERT-99 runs variable-length
# SQuAD queries with the padding stripped; check judges a claim at its stated sequence length (384), where
# the work would exceed the INT8 peak, and no sourced mean length is in the data to judge it at.
KNOWN = {("bert-large-infer", "int8", "A100 80GB SXM4"), ("bert-large-infer", "int8", "H100 80GB SXM5"),
         ("bert-large-infer", "int8", "H200")}


def test_check_gives_every_published_claim_the_experts_verdict(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUARENA_DB", str(tmp_path / "absent.db"))   # published ceilings only, no measurements
    wrong = []
    for i, c in enumerate(evidence.claims(), 1):
        got = cli_verdict(c, tmp_path / "one.csv")
        if got != c.expected and (c.workload, c.precision, c.gpu) not in KNOWN:
            wrong.append(f"row {i} {c.gpu} {c.workload} {c.precision} {c.throughput or c.latency or c.scaling}: "
                         f"expected {c.expected}, got {got}")
    assert not wrong, "\n".join(wrong)
