"""Model and micro-benchmark claims take their ceiling by one rule (analysis/credible.ceiling_of): a
measurement of the database raises a ceiling but never sets one alone, and a generation without published
evidence borrows the best of any.  Before, analysis/physics/micro_check.py kept its own copy of the rule."""

from __future__ import annotations

import pytest

from gpuarena.analysis.physics import credible, micro_check
from gpuarena.analysis.verbs import check
from gpuarena.analysis.physics.roofline import precision_class
from gpuarena.store.db import Store
from tests.analysis.conftest import result

GPU = {"hopper": "NVIDIA H100 80GB SXM5", "ampere": "NVIDIA A100 80GB SXM4"}

# (published and measured evidence as (generation, share, measured), the generation judged,
#  the index of the best piece of evidence, or None for no ceiling, and whether it is borrowed)
SCENARIOS = [
    ([("hopper", 0.9, True)], "hopper", None, None),                         # a measurement never sets one alone
    ([("hopper", 0.8, False), ("hopper", 0.9, True)], "hopper", 1, False),   # but raises one
    ([("hopper", 0.8, False), ("hopper", 0.7, True)], "hopper", 0, False),   # a slower one does not lower it
    ([("ampere", 0.85, False), ("hopper", 0.9, True)], "hopper", 1, True),   # a borrowed one is raised too
    ([("ampere", 0.85, False), ("hopper", 0.6, True)], "hopper", 0, True),
    ([("ampere", 0.85, False), ("ampere", 0.95, True)], "hopper", 0, True),  # another generation's measurement
    ([("ampere", 0.85, False), ("hopper", 0.5, False)], "hopper", 1, False),  # this generation's published rules
]


def _model(gen: str, share: float, measured: bool, i: int) -> credible.Evidence:
    return credible.Evidence("resnet50-train", "bf16", gen, GPU[gen], 1000 * share, share, share, "engine",
                             f"evidence {i}", measured)


def _micro(gen: str, share: float, measured: bool, i: int) -> micro_check.MicroEvidence:
    return micro_check.MicroEvidence("compute-peak", precision_class("bf16"), GPU[gen], 1, 1000 * share, share,
                                     "engine", f"evidence {i}", measured)


@pytest.mark.parametrize("pieces,generation,best,borrowed", SCENARIOS)
def test_model_and_micro_claims_follow_one_ceiling_rule(pieces, generation, best, borrowed):
    model = credible.ceiling("resnet50-train", "bf16", generation,
                             pool=[_model(*p, i) for i, p in enumerate(pieces)])
    micro = micro_check.ceiling("compute-peak", "bf16", generation,
                                pool=[_micro(*p, i) for i, p in enumerate(pieces)])
    for c in (model, micro):
        if best is None:
            assert c is None
        else:
            assert isinstance(c, credible.Ceiling)
            assert (c.best.source, c.borrowed) == (f"evidence {best}", borrowed)


def test_a_measurement_raises_a_model_and_a_micro_ceiling_alike(tmp_path):
    """On an empty database a figure above the published best is implausible; stored a measurement just
    under it on the same GPU, it is plausible, the measurement named as the ceiling: for a ResNet-50 and a
    membw claim alike (Ampere has no published membw figure: its ceiling is borrowed, and raised all the same)."""
    model = {"gpu": "A100 80GB SXM4", "workload": "resnet50-train", "precision": "default", "batch_size": 256,
             "throughput": 1550}
    micro = {"gpu": "A100 80GB SXM4", "workload": "membw", "throughput": 1950}
    s = Store(str(tmp_path / "m.db"))
    assert [check.check_claim(c, s).verdict for c in (model, micro)] == ["implausible", "implausible"]
    s.add_result(result("NVIDIA A100-SXM4-80GB", 256, [256 / 1500] * 3))
    s.add_result(result("NVIDIA A100-SXM4-80GB", 1, [1.0] * 3, workload="membw", params={"size_mb": 4096},
                        case_key="membw|seed", unit="GB/s", precision="n/a", throughput_median=1900,
                        items_per_step=8.59, flops_per_item=None, tflops=None))
    for c in (model, micro):
        r = check.check_claim(c, s)
        assert r.verdict == "plausible", r.reason
        assert r.ceiling["source"].startswith("gpuarena measurement (run None")
        assert r.ceiling["gpu"] == GPU["ampere"]
    s.close()


@pytest.mark.parametrize("field,value,match", [
    ("gpu", "Z9000", r"ceilings.csv: resnet50-train on Z9000: .*Z9000"),
    ("seq_len", "128", r"ceilings.csv: resnet50-train on A100 80GB SXM4: resnet50-train has no seq_len condition"),
    ("workload", "resnet51-train", r"ceilings.csv: resnet51-train on A100 80GB SXM4: .*resnet51-train"),
])
def test_a_model_ceiling_that_names_nothing_known_is_refused_naming_its_file(tmp_path, field, value, match):
    """credible reads data/ceilings.csv through data/evidence.py, then refuses with the file what the catalog
    or the workload does not know: before, a bare ValueError or a line-less error came out of check."""
    import csv

    from gpuarena.data import evidence
    from gpuarena.errors import UserError

    with open(evidence.CEILINGS_CSV, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        names, rows = reader.fieldnames, list(reader)
    rows[0][field] = value
    path = tmp_path / "ceilings.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=names)
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(UserError, match=match):
        credible.published_evidence(path)
