"""docs/workloads.md's worked example, run as written: a DDP-wrappable training workload with
published rows is one module (plus its rows and one entry point), and list, import --published,
run, ddp-train, compare, check, whatif and advise all take it without a gpuarena file changed."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from gpuarena.data import catalog

from tests.conftest import ROOT
from tests.procs import gp_batch

DOC = Path(ROOT) / "docs" / "workloads.md"
HEADING = "## Worked example: a DDP-wrappable training workload with published rows"
SUITE = """
name: worked-example
method: {size: tiny, repeats: 2}
entries:
  - workload: mlp-train
  - workload: ddp-train
    params: {model: mlp}
    gpus: [2]
"""


def blocks() -> dict[str, str]:
    """The section's fenced blocks by language: the module, its CSV, its entry point."""
    text = DOC.read_text(encoding="utf-8").split(HEADING, 1)[1].split("\n## ", 1)[0]
    return {lang: body for lang, body in re.findall(r"```(\w+)\n(.*?)```", text, re.S)}


def install(site: Path) -> dict:
    """The package and its dist-info, as `pip install` leaves them; the CSV's VALUE is 40% of each
    card's TF32 peak over the class's FLOPs per sample, SOURCE says it is this test's."""
    b = blocks()
    pkg = site / "gpuarena_mlp"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(b["python"])
    flops = 48 * 1024 ** 2            # the class's flops() at its defaults (hidden 1024)
    rows = []
    for line in b["csv"].splitlines():
        if "VALUE" in line:
            peak = catalog.match(line.split(",")[0]).peaks["tf32"]
            line = line.replace("VALUE", f"{0.4 * peak * 1e12 / flops:.0f}").replace("SOURCE", "test fixture")
        rows.append(line)
    (pkg / "published.csv").write_text("\n".join(rows) + "\n")
    info = site / "gpuarena_mlp-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gpuarena-mlp\nVersion: 0.1\n")
    entry = b["toml"].split("\n", 1)[1].replace('"', "")
    (info / "entry_points.txt").write_text("[gpuarena.workloads]\n" + entry)
    return {"PYTHONPATH": os.pathsep.join([str(Path(ROOT) / "src"), str(site), os.environ.get("PYTHONPATH", "")])}


def ok(p) -> str:
    assert p.returncode == 0, (p.args, p.stderr[-3000:])
    assert "left out" not in p.stderr, p.stderr      # the plugin loaded cleanly
    return p.stdout


def test_worked_example_through_every_verb(tmp_path):
    env = install(tmp_path / "site")
    db = str(tmp_path / "mlp.db")
    suite = tmp_path / "suite.yaml"      # run it, and ddp-train wrapping it on 2 gloo ranks, in one command
    suite.write_text(SUITE)
    claim = ("check", "--gpu", "A100 80GB SXM4", "-w", "mlp-train", "--precision", "tf32", "--batch-size", "256",
             "-f", "json")
    peak = 156.0e12 / (48 * 1024 ** 2)                            # samples/s at the A100's TF32 peak
    # every verb in one new interpreter that finds the plugin at start-up (a process per verb would
    # import torch nine times)
    (listed, imported, ran, shown, compared, fine, above, scaled, advice) = gp_batch(
        ("list", "-f", "json"),
        ("import", "--published", "--db", db),                  # its own rows beside the shipped ones
        ("run", "--suite", str(suite), "--device", "cpu", "--db", db, "-q"),
        ("results", "--db", db, "-f", "json"),
        ("compare", "-b", "A100 80GB SXM4", "-w", "mlp-train", "--db", db),
        (*claim, "--throughput", f"{0.5 * peak:.0f}"),
        (*claim, "--throughput", f"{2 * peak:.0f}"),
        ("whatif", "-w", "mlp-train", "--gpu", "A100 80GB SXM4", "--n", "2,8", "--throughput", "10000", "-f", "json"),
        ("advise", "-w", "mlp-train", "--db", db, "-f", "json"),
        cwd=str(tmp_path), env=env, timeout=600)
    listed = {w["name"]: w for w in json.loads(ok(listed))["workloads"]}
    assert listed["mlp-train"]["plugin"] and listed["mlp-train"]["kind"] == "training"
    ok(imported)
    ok(ran)
    assert shown.returncode == 0 and "declare" not in shown.stderr, shown.stderr   # every figure declared
    rows = json.loads(shown.stdout)
    mine = [(r["workload"], r["gpus"], r["status"], (r.get("params") or {}).get("model")) for r in rows
            if r["workload"] in ("mlp-train", "ddp-train")]
    assert ("mlp-train", 1, "ok", None) in mine and ("ddp-train", 2, "ok", "mlp") in mine, mine
    assert sum(1 for r in rows if r["workload"] == "mlp-train" and r.get("source") == "published") == 2
    # its figures, declared in MLPFigures, stored by both runs (ddp-train carries the wrapped workload's)
    measured = [r for r in rows if r.get("source") == "measured" and r["status"] == "ok"
                and (r["workload"] == "mlp-train" or (r.get("params") or {}).get("model") == "mlp")]
    assert len(measured) == 2 and all(isinstance(r["extra"]["loss_last"], float) for r in measured), measured

    assert "H100" in ok(compared)
    fine, above = json.loads(ok(fine)), json.loads(ok(above))
    assert [fine[0]["verdict"], above[0]["verdict"]] == ["plausible", "impossible"], (fine, above)

    scaled = json.loads(ok(scaled))
    assert [r["n"] for r in scaled["rows"]] == [2, 8] and scaled["grad_bytes"] > 0
    advice = json.loads(ok(advice))
    assert {"NVIDIA A100 80GB SXM4", "NVIDIA H100 80GB SXM5"} <= {r["gpu"] for r in advice["rows"]}
