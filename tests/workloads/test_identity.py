"""Workload identity: the golden fingerprints follow version bumps; comparability ignores the hash.

tests/golden/fingerprints.json holds, per built-in workload, the fingerprint of every version it has
had since the file began: {name: {version: fingerprint}}.  Comparability is by ``version``; the
fingerprint is provenance.  So:

* a definition change at an unchanged version fails (bump ``version``, or -- when results stay
  comparable -- regenerate with ``UPDATE_GOLDEN=1 pytest tests/workloads/test_identity.py``);
* a version bump whose fingerprint is not recorded fails too, and so does a later change at the
  new version: a bump no longer switches the guard off;
* regenerating sets the fingerprint of each workload's current version and keeps the others.

When the fingerprint itself changes meaning (identity.py: prose left out, the shared base's timed
methods covered), every hash moves at once: the golden is regenerated, versions are NOT bumped.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from gpuarena.identity import comparable, why_not_comparable
from gpuarena.workloads import registry
from gpuarena.workloads.base import Param, Workload
from gpuarena.workloads.resnet50_train.run import ResNet50Train
from gpuarena.workloads.resnet50_train.spec import ResNet50TrainSpec

GOLDEN = Path(__file__).parents[1] / "golden" / "fingerprints.json"
ABOUT = ("{workload: {version: fingerprint}} for every version each built-in workload has had since this file "
         "began. Comparability is by version; the fingerprint is provenance. Regenerate (current versions only) "
         "with UPDATE_GOLDEN=1 pytest tests/workloads/test_identity.py; see that file's docstring.")


def current() -> dict[str, tuple[int, str]]:
    """The built-in workloads' (version, fingerprint) now; plugins keep their own goldens."""
    return {name: (registry.get(name).version, registry.get(name).fingerprint()) for name in registry.REGISTRY}


def versions(golden: dict) -> dict[str, dict[str, str]]:
    """{name: {version: fingerprint}}; an entry of the earlier one-version form
    ({"version": 1, "fingerprint": ...}, as a branch from before may still merge in) read as such."""
    out = {}
    for name, entry in golden.items():
        if not name.startswith("_"):
            out[name] = ({str(entry["version"]): entry["fingerprint"]} if "fingerprint" in entry else dict(entry))
    return out


def problems(now: dict[str, tuple[int, str]], golden: dict) -> list[str]:
    """Why the golden does not vouch for the current definitions, one line each."""
    out = []
    golden = versions(golden)
    for name, (version, fp) in sorted(now.items()):
        seen = golden.get(name, {})
        if str(version) not in seen:
            out.append(f"{name} version {version}: no golden fingerprint (bumped without regenerating?)")
        elif seen[str(version)] != fp:
            out.append(f"{name} version {version}: the definition changed but `version` did not "
                       f"(golden {seen[str(version)]}, now {fp})")
        if any(int(v) > version for v in seen):
            out.append(f"{name}: the golden records version {max(map(int, seen))}, the class says {version}")
    return out


def regenerated(now: dict[str, tuple[int, str]], golden: dict) -> dict:
    """The golden with each workload's current version set; earlier versions kept."""
    out = versions(golden)
    for name, (version, fp) in now.items():
        out.setdefault(name, {})[str(version)] = fp
    return {"_about": ABOUT, **out}


def test_fingerprints_follow_the_version():
    now = current()
    golden = json.loads(GOLDEN.read_text())
    if os.environ.get("UPDATE_GOLDEN") or os.environ.get("GOLDEN_UPDATE"):   # either spelling
        golden = regenerated(now, golden)
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    found = problems(now, golden)
    assert not found, "\n".join(found) + (
        "\nbump `version` on the class if results are no longer comparable, else regenerate the golden: "
        "UPDATE_GOLDEN=1 pytest tests/workloads/test_identity.py")


def _doubled_flops(cls, params: dict) -> float:
    return 2 * ResNet50TrainSpec.__dict__["flops"].__func__(cls, params)


def _tripled_flops(cls, params: dict) -> float:
    return 3 * ResNet50TrainSpec.__dict__["flops"].__func__(cls, params)


def test_a_version_bump_does_not_switch_the_guard_off(monkeypatch):
    """The issue's bypass: bump `version` without regenerating, then double a FLOP formula."""
    golden = json.loads(GOLDEN.read_text())
    assert not problems(current(), golden)
    monkeypatch.setattr(ResNet50TrainSpec, "version", ResNet50TrainSpec.version + 1)
    monkeypatch.setattr(ResNet50TrainSpec, "flops", classmethod(_doubled_flops))
    assert any("resnet50-train version" in p and "no golden fingerprint" in p for p in problems(current(), golden))
    golden = regenerated(current(), golden)        # the bump recorded, the first version kept
    assert not problems(current(), golden)
    assert len(golden["resnet50-train"]) == 2
    monkeypatch.setattr(ResNet50TrainSpec, "flops", classmethod(_tripled_flops))   # changed after the bump
    assert any("definition changed" in p for p in problems(current(), golden))


def test_an_entry_of_the_one_version_form_still_counts():
    golden = json.loads(GOLDEN.read_text())
    version, fp = current()["matmul"]
    old_form = {**golden, "matmul": {"version": version, "fingerprint": fp}}
    assert not problems(current(), old_form)
    assert regenerated(current(), old_form)["matmul"] == {str(version): fp}
    stale = {**golden, "matmul": {"version": version, "fingerprint": "0" * 16}}
    assert any("matmul version" in p and "definition changed" in p for p in problems(current(), stale))


def test_a_version_going_down_fails():
    golden = json.loads(GOLDEN.read_text())
    golden = {**golden, "resnet50-train": {**golden["resnet50-train"], "99": "0" * 16}}
    assert any("records version 99" in p for p in problems(current(), golden))


def test_prose_does_not_change_a_fingerprint(monkeypatch):
    before = ResNet50Train.fingerprint()
    monkeypatch.setattr(ResNet50Train, "description", "reworded")
    monkeypatch.setattr(ResNet50Train, "source", "another section")
    monkeypatch.setattr(ResNet50Train, "params",
                        tuple(dataclasses.replace(p, doc=p.doc + " (clearer)") for p in ResNet50Train.params))
    monkeypatch.setattr(ResNet50Train, "variants", {k: v.upper() for k, v in ResNet50Train.variants.items()})
    assert ResNet50Train.fingerprint() == before
    first = ResNet50Train.params[0]
    monkeypatch.setattr(ResNet50Train, "params",
                        (dataclasses.replace(first, default=first.default * 2),) + ResNet50Train.params[1:])
    assert ResNet50Train.fingerprint() != before    # a default is not prose


def _step_changed(self) -> None:
    self.opt.zero_grad(set_to_none=False)


def test_the_fingerprint_covers_the_spec_and_the_body(monkeypatch):
    """The registry hands out the torch-free spec; its fingerprint is the body's (run.py), whose
    MRO holds the spec (spec.py): a change to step() or to a FLOP formula each moves it."""
    spec = registry.get("resnet50-train")
    assert spec is ResNet50TrainSpec and spec.body() is ResNet50Train
    assert registry.runnable("resnet50-train") is ResNet50Train
    before = spec.fingerprint()
    assert ResNet50Train.fingerprint() == before
    monkeypatch.setattr(ResNet50Train, "step", _step_changed)
    assert spec.fingerprint() != before
    monkeypatch.undo()
    assert spec.fingerprint() == before
    monkeypatch.setattr(ResNet50TrainSpec, "flops", classmethod(_doubled_flops))
    assert spec.fingerprint() != before


def _items_per_step_changed(self) -> float:
    return 2.0 * float(self.p.get("batch_size", 1))


def _parse_changed(self, raw):
    return self.type(raw)


def test_inherited_base_behaviour_counts(monkeypatch):
    """Workload.items_per_step shapes the throughput of those that inherit it, not of those that
    override it (matmul counts FLOPs per step itself)."""
    resnet, matmul = registry.runnable("resnet50-train"), registry.runnable("matmul")
    assert "items_per_step" not in vars(resnet) and "items_per_step" in vars(matmul)
    before = resnet.fingerprint(), matmul.fingerprint()
    monkeypatch.setattr(Workload, "items_per_step", _items_per_step_changed)
    assert resnet.fingerprint() != before[0]
    assert matmul.fingerprint() == before[1]
    monkeypatch.undo()
    monkeypatch.setattr(Param, "parse", _parse_changed)     # how a given value becomes the one that runs
    assert resnet.fingerprint() != before[0] and matmul.fingerprint() != before[1]


class ToyTrain(ResNet50Train):
    """A plugin's DDP-wrappable training workload (outside gpuarena, found by entry point)."""

    name = "toy-train"
    ddp_name = "toy"


def test_a_plugin_does_not_change_ddp_train(monkeypatch):
    ddp = registry.get("ddp-train")
    before = ddp.fingerprint()
    monkeypatch.setattr(registry, "_plugins", {"toy-train": f"{__name__}:ToyTrain"})
    assert registry.ddp_models()["toy"] is ToyTrain        # ddp-train can wrap it ...
    assert ddp.fingerprint() == before                    # ... yet its identity is the built-ins'


def test_fingerprint_is_stable_and_per_class():
    bert_i, bert_t = registry.get("bert-large-infer"), registry.get("bert-large-train")
    assert bert_i.fingerprint() == bert_i.fingerprint()
    assert bert_i.fingerprint() != bert_t.fingerprint()


def test_wrapper_fingerprint_follows_the_wrapped_workload(monkeypatch):
    ddp, resnet = registry.get("ddp-train"), registry.get("resnet50-train")
    before = ddp.fingerprint()
    monkeypatch.setattr(resnet, "published_as", resnet.published_as + ("something else",))
    assert ddp.fingerprint() != before


def test_comparable_ignores_the_code_hash():
    from gpuarena.store.rows import validated

    def result(**fields):      # a stored Result, as analyses receive them
        return validated({"id": 1, "case_key": "k", "workload": "resnet50-train", "variant": "seed", "params": {},
                          "status": "ok", "throughput_median": 1.0, "workload_version": 1,
                          "code_hash": "db09345df06ef42b", **fields})

    a = result()
    assert comparable(a, result(code_hash=registry.get("resnet50-train").fingerprint()))
    assert "version differs" in why_not_comparable(a, result(workload_version=2))
    assert "protocol differs" in why_not_comparable(a, result(extra={"protocol": 2}))
    assert comparable(a, result(source="published", workload_version=None, code_hash=None))
