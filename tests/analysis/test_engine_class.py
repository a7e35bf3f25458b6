"""One engine-class rule (analysis/rows/engine.py): every variant of every registered workload is classed
the same by each verb that compares like with like (compare, cost, the frontier, the endpoints' table and
expected through engine_of; advise's candidates; the credible shares' measured evidence; the report's first
screen), and no module keeps a rule of its own."""

import re
from pathlib import Path

import pytest

from gpuarena.analysis.physics import credible
from gpuarena.analysis.rows.engine import engine_of, engine_of_variants
from gpuarena.analysis.rows.published import COMPILED, EAGER, TENSORRT, engine_class
from gpuarena.report.first_screen import like_class
from gpuarena.store.result import Result
from gpuarena.workloads import registry
from tests.analysis.conftest import result

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuarena"


def _result(workload: str, variant: str, **kw) -> Result:
    return Result.model_validate({"id": 0, "case_key": f"{workload}|{variant}", "source": "measured",
                                  "workload": workload, "variant": variant, "params": {}, "gpus": 1, "device": "cuda",
                             "device_name": "NVIDIA H200", "status": "ok", "unit": "items/s",
                             "precision": "default", "throughput_median": 1.0, "extra": {}, **kw})


CASES = [(w, v) for w in registry.REGISTRY for v in sorted(registry.get(w).variants)]


@pytest.mark.parametrize("workload,variant", CASES)
def test_every_variant_is_one_class_everywhere(workload, variant):
    r = _result(workload, variant)
    cls = engine_of_variants({variant})
    assert engine_of(r) == cls
    assert like_class(r)[1] == cls                        # the report's first screen, advise's candidates
    with_seed = _result(workload, f"seed+{variant}" if variant != "seed" else "seed")
    assert engine_of(with_seed) == cls                   # a recipe's other variants do not change its engine


def test_the_classes_of_the_engines_gpuarena_runs():
    assert {v: engine_of_variants({v}) for v in ("seed", "compile", "compile-max-autotune", "aot-inductor",
                                                 "tensorrt", "cuda-graph", "cudnn-fused", "eager", "eager-attn")} \
        == {"seed": EAGER, "compile": COMPILED, "compile-max-autotune": COMPILED, "aot-inductor": COMPILED,
            "tensorrt": TENSORRT, "cuda-graph": EAGER, "cudnn-fused": EAGER, "eager": EAGER, "eager-attn": EAGER}
    # a measured class is the one a published figure of that engine gets from its software
    assert engine_class("PyTorch 2.1, torch.compile") == COMPILED and engine_class("PyTorch 2.1") == EAGER
    assert engine_class("TensorRT 8.6") == TENSORRT


def test_a_published_or_served_figure_keeps_its_own_class():
    pub = _result("resnet50-infer", "seed", source="published", extra={"engine": TENSORRT, "software": "TensorRT"})
    assert engine_of(pub) == TENSORRT
    assert engine_of(_result("resnet50-infer", "seed", source="published", extra={"software": "MXNet 1.9"})) == "MXNet"
    assert engine_of(_result("endpoint-serve", "seed", extra={"engine": "vLLM 0.6"})) == "vLLM 0.6"


def test_the_spread_of_eager_runs_leaves_every_compiled_engine_out(tmp_path):
    from gpuarena.store.db import Store

    s = Store(str(tmp_path / "a.db"))
    for variant, step_s in (("seed", 0.1), ("seed", 0.11), ("compile-max-autotune", 0.1),
                            ("compile-max-autotune", 0.3)):
        s.add_result(result("NVIDIA H200", 32, [step_s] * 5, variant=variant))
    spread, how = credible.spread(s, "resnet50-train")
    s.close()
    assert spread == pytest.approx(0.10) and "1 eager" in how      # the compiled pair (3x apart) is not in it


def test_no_module_keeps_its_own_engine_rule():
    """The class names are written once (analysis/rows/published.py) and only rows/engine.py classes a variant."""
    names = re.compile(r'"PyTorch (eager|compiled)"|"compile" in variants|"compile" in r\.variant')
    hits = [f"{p.relative_to(SRC)}:{i}" for p in SRC.rglob("*.py")
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if names.search(line)]
    assert hits == ["analysis/rows/published.py:35"]
