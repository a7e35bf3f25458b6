"""Each physics one object (analysis/physics/models.py): every physics a workload may declare is registered once,
every built-in workload reaches its object, and no module outside it switches on a physics' name."""

import re
from pathlib import Path

import pytest

from gpuarena.analysis.physics import models
from gpuarena.errors import UserError
from gpuarena.workloads import facts, registry

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuarena"


def test_every_declared_physics_is_one_registered_object():
    assert set(models.PHYSICS) == set(facts.PHYSICS)
    for name in registry.REGISTRY:
        p = models.of(name)
        assert p.name == registry.fact(name, "physics") and callable(p.check) and p.what


def test_no_module_switches_on_a_physics_name():
    """The issue's criterion: `grep -rn 'physics ==\\|physics in (' src` finds nothing."""
    pattern = re.compile(r"physics\s*==|physics\s+in\s*\(")
    hits = [f"{p.relative_to(SRC)}:{i}" for p in SRC.rglob("*.py")
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert hits == []


def test_a_claim_reaches_its_physics_object():
    """The serving object answers an llm-serve claim, the training object an llm-train one, the roofline a
    ResNet-50 one: each verdict row is the one its own module gives."""
    from gpuarena.analysis.verbs.check import check_claim

    serve = check_claim({"gpu": "H200", "workload": "llm-serve", "precision": "bf16", "batch_size": 1,
                         "throughput": 100, "shape": "llama3-8b"})
    train = check_claim({"gpu": "H100 80GB SXM5", "workload": "llm-train", "precision": "bf16", "batch_size": 2,
                         "throughput": 46096, "seq_len": 8192, "gpus": 8, "model": "llama3-8b"})
    roof = check_claim({"gpu": "H200", "workload": "resnet50-train", "precision": "bf16", "batch_size": 256,
                        "throughput": 9500})
    assert serve.verdict == "plausible" and "tokens/s" in serve.reason
    assert roof.verdict == "implausible" and roof.bound_by
    assert train.verdict == "plausible" and "MFU" in train.reason
    with pytest.raises(UserError, match="workload"):
        models.of("no-such-workload")


# The physics implementations models.py itself imports (to build its objects) select their own physics' rows
# through the registry: importing models.py from them would close an import circle.
BELOW_MODELS: set[str] = set()   # the implementations below models.py ask analysis/physics/judged.py too


def test_only_the_physics_objects_read_a_workloads_physics():
    """`grep -rn 'physics=' src` finds analysis/physics/judged.py alone: the physics objects (Physics.judges,
    Physics.workloads) and the implementations below them ask it; advise, whatif, check, the report and the
    verbs ask the objects."""
    import sys

    pattern = re.compile(r"physics=|fact\([^)]*[\"']physics[\"']|\.physics\s*!=")
    hits = {str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
            if any(pattern.search(line) for line in p.read_text(encoding="utf-8").splitlines())}
    assert hits == {"analysis/physics/judged.py"} | BELOW_MODELS
    for path in BELOW_MODELS:     # each really is below models.py (imported while it builds its objects)
        assert "gpuarena." + path[:-3].replace("/", ".") in sys.modules


def test_advise_and_whatif_plan_by_the_physics_object():
    assert {p.plan for p in models.PHYSICS.values()} <= set(models.PLANS)
    plans = {name: models.of(name).plan for name in registry.REGISTRY}
    assert plans["llm-serve"] == "serving" and plans["llm-train"] == "training"
    assert {n for n, p in plans.items() if p == "catalog"} == set(registry.REGISTRY) - {"llm-serve", "llm-train"}
    for p in models.PHYSICS.values():
        assert all(models.of(w) is p for w in p.workloads())
        assert all(p.judges(w) == (models.of(w) is p) for w in registry.REGISTRY)
    assert not models.SERVING.judges(None) and not models.SERVING.judges("no-such-workload")


@pytest.mark.parametrize("args,code,text", [
    (("whatif", "-w", "llm-serve", "--gpu", "H200", "--n", "2"), 2, "tensor parallel"),
    (("whatif", "-w", "no-such-workload", "--gpu", "H200", "--n", "2"), 2, "no-such-workload"),
    (("advise", "-w", "no-such-workload"), 2, "no-such-workload"),
])
def test_advise_and_whatif_refuse_through_the_physics_object(tmp_path, args, code, text):
    from tests.conftest import gpuarena

    r = gpuarena(*args, "--db", str(tmp_path / "none.db"))
    assert r.returncode == code and text in r.stdout + r.stderr
