"""Workload identity: fingerprints follow version bumps; comparability ignores the hash."""

from __future__ import annotations

import json
import os
from pathlib import Path

from gpuarena.identity import comparable, why_not_comparable
from gpuarena.workloads import registry

GOLDEN = Path(__file__).parents[1] / "golden" / "fingerprints.json"


def current() -> dict:
    return {name: {"version": cls.version, "fingerprint": cls.fingerprint()}
            for name, cls in sorted(registry.classes().items()) if cls.__module__.startswith("gpuarena.")}


def test_fingerprints_change_only_with_a_version_bump():
    now = current()
    if os.environ.get("UPDATE_GOLDEN") or os.environ.get("GOLDEN_UPDATE"):   # either spelling
        GOLDEN.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
    golden = json.loads(GOLDEN.read_text())
    stale = [n for n in now if n in golden and now[n]["fingerprint"] != golden[n]["fingerprint"]
             and now[n]["version"] == golden[n]["version"]]
    assert not stale, (
        f"the definition of {', '.join(stale)} changed but its `version` did not: bump `version` on the "
        "class if results are no longer comparable, else regenerate the golden file with "
        "UPDATE_GOLDEN=1 pytest tests/workloads/test_identity.py")
    missing = sorted(set(now) - set(golden))
    assert not missing, f"no golden fingerprint for {missing}: run UPDATE_GOLDEN=1 pytest {__file__}"


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
    a = {"workload": "resnet50-train", "workload_version": 1, "code_hash": "db09345df06ef42b"}
    b = dict(a, code_hash=registry.get("resnet50-train").fingerprint())
    assert comparable(a, b)
    assert "version differs" in why_not_comparable(a, dict(a, workload_version=2))
    assert "protocol differs" in why_not_comparable(a, dict(a, extra={"protocol": 2}))
    assert comparable(a, {"workload": "resnet50-train", "source": "published"})
