"""Analysis and the report ask the workload class, never its name: the class facts and hooks of
workloads/facts.py are valid, and no module outside workloads/ tests a workload's name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gpuarena.analysis.rows import precision as P
from gpuarena.workloads import registry
from gpuarena.workloads.base import Workload
from gpuarena.workloads.facts import DEVICE_FIGURES, PHYSICS
from gpuarena.workloads.precision import OP_CLASSES

SRC = Path(__file__).parents[2] / "src" / "gpuarena"


def _consts(node) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [x for e in node.elts for x in _consts(e)]
    return []


def _about_a_workload(node) -> bool:
    text = ast.unparse(node)
    return "workload" in text or text.endswith(".name")


def name_tests(tree: ast.AST, names: set[str]) -> list[str]:
    """Comparisons of a workload (a name, a dict's "workload", a class's .name) with a workload's
    name; workload= arguments, registry.get() calls and dict keys that are workload names."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            hit = [c for s in sides for c in _consts(s) if c in names]
            if hit and any(_about_a_workload(s) for s in sides if not _consts(s)):
                found.append(f"{node.lineno}: {ast.unparse(node)[:80]}")
        elif isinstance(node, ast.Call):
            args = [k.value for k in node.keywords if k.arg == "workload"]
            if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and \
                    ast.unparse(node.func.value) == "registry":
                args += node.args[:1]
            if any(c in names for a in args for c in _consts(a)):
                found.append(f"{node.lineno}: {ast.unparse(node)[:80]}")
        elif isinstance(node, ast.Dict):
            keys = [c for k in node.keys if k is not None for c in _consts(k)]
            if any(k in names and k not in OP_CLASSES for k in keys):
                found.append(f"{node.lineno}: dict keyed by workload names")
    return found


def test_no_workload_name_tests_outside_workloads():
    names = set(registry.REGISTRY)
    bad = {}
    for path in sorted(SRC.rglob("*.py")):
        if "workloads" in path.relative_to(SRC).parts:
            continue
        found = name_tests(ast.parse(path.read_text(encoding="utf-8")), names)
        if found:
            bad[str(path.relative_to(SRC))] = found
    assert not bad, bad


def test_the_guard_sees_the_old_forms():
    names = {"resnet50-train", "llm-serve", "matmul"}
    code = '''
if r["workload"] == "llm-serve": pass
if workload in ("resnet50-train", "x"): pass
store.results(workload="matmul")
registry.get("llm-serve")
FAMILIES = {"resnet50-train": 1}
if dom == "matmul": pass
'''
    assert len(name_tests(ast.parse(code), names)) == 5


def test_every_class_declares_valid_facts():
    for name, cls in registry.classes().items():
        assert cls.physics in PHYSICS, name
        assert cls.device_figure is None or cls.device_figure in DEVICE_FIGURES, name
        assert set(cls.family_settings) <= set(cls.param_map()), name
        if cls.finite_fix:
            key = cls.finite_fix.split("--set ", 1)[1].split("=", 1)[0]
            assert key in cls.param_map(), name
        assert cls.label(cls.resolve_params({}, size="tiny")).startswith(name)
    assert registry.named(physics="serving") == ["llm-serve"]
    assert registry.named(device_figure="memory-bandwidth") == ["membw"]
    assert registry.has("ddp-train", physics="data-parallel") and not registry.has("no-such", physics="roofline")
    assert registry.fact("no-such", "finite_fix", "x") == "x"


def test_published_families_have_rows():
    from gpuarena.analysis.physics.projection import family

    for name in registry.REGISTRY:
        cls = registry.get(name)
        if cls.published_family:
            assert len(family(name, "tf32")) >= 2, name


@pytest.mark.parametrize("name,setting,params", [
    ("resnet50-train", "224x224", {"image_size": 224}),
    ("resnet50-train", "", {"image_size": 224}),
    ("bert-large-train", "384", {"seq_len": 384}),
    ("sd15-generate", "512x512, 50 steps", {"image_size": 512, "inference_steps": 50}),
    ("matmul", "8192", {}),
])
def test_published_params_are_the_class_reading(name, setting, params):
    assert registry.get(name).published_params(setting) == params


def test_label_names_what_sets_a_ceiling_apart():
    assert registry.get("matmul").label({"dtype": "bf16"}) == "matmul bf16"
    assert registry.get("h2d").label({"pinned": False}) == "h2d pageable"
    assert registry.get("resnet50-train").label({}) == "resnet50-train"


@pytest.mark.parametrize("arch", ["volta", "ampere", "hopper"])
def test_analysis_peak_precision_is_the_class_answer(arch):
    for name in registry.REGISTRY:
        cls = registry.get(name)
        for request, variants in P.REQUEST_VARIANTS.items():
            assert P.peak_precision(name, request, arch) == cls.peak_precision(variants, arch), (name, request)
        assert P.peak_precision(name, "fp8", arch) == "fp8"
    # ddp-train runs the recipe it wraps: resnet50-train's seed, TF32 convolutions on Ampere
    assert P.peak_precision("ddp-train", "default", "ampere") == "tf32"


def test_planning_checks_are_declared_on_the_base():
    from gpuarena.workloads.spec import WorkloadSpec

    for hook in ("check_params", "check_layout", "check_variant"):
        assert vars(WorkloadSpec)[hook].__func__.__doc__, hook     # torch-free: planning reads the spec
    assert issubclass(Workload, WorkloadSpec) and Workload.default_repeats is None
    assert "hasattr" not in (SRC / "spec" / "model.py").read_text(encoding="utf-8")
