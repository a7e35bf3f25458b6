"""Third-party workloads: a package with one ``gpuarena.workloads`` entry point, found by the
real CLI (list, run, report) through importlib.metadata; broken or shadowing plugins are left
out with one line each, never a crash."""

from __future__ import annotations

import json
import os
import textwrap

from tests.procs import gp_batch

TOY = textwrap.dedent('''
    """A plugin workload: y += a * x over n floats."""
    import torch

    from gpuarena.workloads.base import Param, Workload


    class Axpy(Workload):
        name = "toy-axpy"
        version = 1
        description = "y += 2 x over n float32 elements"
        item = "element"
        kind = "micro"
        axis = "n"
        params = (Param("n", int, 1 << 16, "elements", tiny=4096, min=1, max=1 << 30),)

        def setup(self):
            self.x = torch.ones(self.p["n"], device=self.device)
            self.y = torch.zeros_like(self.x)

        def step(self):
            self.y.add_(self.x, alpha=2.0)

        def items_per_step(self):
            return float(self.p["n"])

        @classmethod
        def flops(cls, params):
            return 2.0   # one multiply and one add per element


    class NotAWorkload:
        pass
''')

ENTRY_POINTS = """[gpuarena.workloads]
toy-axpy = gpuarena_toy:Axpy
resnet50-train = gpuarena_toy:Axpy
toy-missing = gpuarena_toy_missing:Gone
toy-wrong = gpuarena_toy:NotAWorkload
"""


def install_plugin(site) -> dict:
    """A package and its dist-info folder on a path entry: what `pip install` leaves behind."""
    (site / "gpuarena_toy").mkdir(parents=True)
    (site / "gpuarena_toy" / "__init__.py").write_text(TOY)
    info = site / "gpuarena_toy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gpuarena-toy\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


def test_plugin_workload_in_list_run_and_report(tmp_path):
    env = install_plugin(tmp_path / "site")
    db, out = str(tmp_path / "plugin.db"), tmp_path / "report.md"
    # the four verbs in one new interpreter that finds the plugins at start-up (see tests.procs.gp_batch)
    listed, ran, shown, rep = gp_batch(
        ("list", "-f", "json"),
        ("run", "-w", "toy-axpy", "--device", "cpu", "-r", "2", "--db", db, "-q"),
        ("results", "--db", db, "-f", "json"),
        ("report", "--db", db, "-f", "md", "-o", str(out)), cwd=str(tmp_path), env=env)
    assert listed.returncode == 0, listed.stderr
    workloads = {w["name"]: w for w in json.loads(listed.stdout)["workloads"]}
    assert workloads["toy-axpy"]["plugin"] and workloads["toy-axpy"]["kind"] == "micro"
    assert not workloads["resnet50-train"]["plugin"]            # the built-in keeps its name
    warned = [line for line in listed.stderr.splitlines() if "plugin" in line]
    assert len(warned) == 3, listed.stderr                      # one line per bad entry point
    assert any("'resnet50-train'" in w and "built-in" in w for w in warned)
    assert any("'toy-missing'" in w and "ModuleNotFoundError" in w for w in warned)
    assert any("'toy-wrong'" in w and "not a gpuarena.workloads.base.Workload" in w for w in warned)

    assert ran.returncode == 0, ran.stderr
    rows = json.loads(shown.stdout)
    assert [(r["workload"], r["status"]) for r in rows] == [("toy-axpy", "ok")], rows
    assert rows[0]["tflops"] > 0 and rows[0]["code_hash"] and rows[0]["throughput"]["unit"] == "elements/s"

    assert rep.returncode == 0, rep.stderr
    assert "toy-axpy" in out.read_text()


SPLIT_SPEC = textwrap.dedent('''
    """A plugin split like a built-in: the spec (no torch) names its body."""
    from gpuarena.workloads.spec import Param, WorkloadSpec


    class ScaleSpec(WorkloadSpec):
        name = "toy-scale"
        runner = "gpuarena_split.run:Scale"
        version = 1
        description = "x *= 1.5 over n float32 elements"
        item = "element"
        kind = "micro"
        params = (Param("n", int, 1 << 16, "elements", tiny=4096, min=1, max=1 << 30),)

        @classmethod
        def flops(cls, params):
            return 1.0


    class NoBodySpec(ScaleSpec):
        name = "toy-nobody"
        runner = "gpuarena_split.gone:Nothing"


    class BadRunnerSpec(ScaleSpec):
        name = "toy-badrunner"
        runner = "not a module path"
''')

SPLIT_BODY = textwrap.dedent('''
    import torch

    from gpuarena.workloads.base import Workload
    from gpuarena_split import ScaleSpec


    class Scale(ScaleSpec, Workload):
        def setup(self):
            self.x = torch.ones(self.p["n"], device=self.device)

        def step(self):
            self.x.mul_(1.5)

        def items_per_step(self):
            return float(self.p["n"])
''')

# list, in a fresh interpreter: does it import the body (or torch) to list the split plugin?
LIST_PROBE = """
import json, runpy, sys
sys.argv = ["gpuarena", "list", "-f", "json"]
try:
    runpy.run_module("gpuarena", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
print(json.dumps(sorted(m for m in ("gpuarena_split.run", "torch") if m in sys.modules)), file=sys.stderr)
"""


def test_a_split_plugin_is_listed_from_its_spec_and_run_through_its_body(tmp_path):
    import subprocess
    import sys

    from tests.procs import ROOT, cli_env

    site = tmp_path / "site"
    (site / "gpuarena_split").mkdir(parents=True)
    (site / "gpuarena_split" / "__init__.py").write_text(SPLIT_SPEC)
    (site / "gpuarena_split" / "run.py").write_text(SPLIT_BODY)
    info = site / "gpuarena_split-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gpuarena-split\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[gpuarena.workloads]\ntoy-scale = gpuarena_split:ScaleSpec\n"
                                           "toy-nobody = gpuarena_split:NoBodySpec\n"
                                           "toy-badrunner = gpuarena_split:BadRunnerSpec\n")
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.path.join(ROOT, "src"), os.environ.get("PYTHONPATH", "")])}
    probe = subprocess.run([sys.executable, "-c", LIST_PROBE], env=cli_env(env), capture_output=True, text=True,
                           timeout=300, cwd=str(tmp_path))
    listed = {w["name"]: w for w in json.loads(probe.stdout)["workloads"]}
    assert listed["toy-scale"]["plugin"] and "toy-nobody" in listed
    assert "toy-badrunner" not in listed and "runner='not a module path' is not 'module:Class'" in probe.stderr
    assert json.loads(probe.stderr.strip().splitlines()[-1]) == []     # neither the body nor torch imported

    db = str(tmp_path / "split.db")
    ran, shown, nobody = gp_batch(
        ("run", "-w", "toy-scale", "--device", "cpu", "-r", "2", "--db", db, "-q"),
        ("results", "--db", db, "-f", "json"),
        ("run", "-w", "toy-nobody", "--device", "cpu", "-r", "2", "--db", db, "-q"), cwd=str(tmp_path), env=env)
    assert ran.returncode == 0, ran.stderr
    rows = json.loads(shown.stdout)
    assert [(r["workload"], r["status"]) for r in rows] == [("toy-scale", "ok")], rows
    assert rows[0]["code_hash"] and rows[0]["throughput"]["unit"] == "elements/s"
    assert nobody.returncode == 2 and "its runner could not be loaded: ModuleNotFoundError" in nobody.stderr
