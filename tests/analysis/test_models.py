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
