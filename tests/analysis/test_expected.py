"""The expected figure beside each result (analysis/verbs/expected.py) and the causes of a slow one
(analysis/rows/causes.py): on the shipped H200 bundles, on a doctored environment, and on a recipe
measured on other GPUs."""

from __future__ import annotations

import copy
import glob
import json
import os

from gpuarena.analysis.rows import causes as C
from gpuarena.analysis.verbs import expected as E
from gpuarena.store.rows import validated

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUNDLES = sorted(glob.glob(os.path.join(ROOT, "docs", "data", "h200*.json")))
LAMBDA = "github lambdal/deeplearning-benchmark"


def _annotated(path):
    b = json.load(open(path))
    envs = {e["id"]: e["fingerprint"] for e in b["environments"]}
    rows = [validated(r) for r in b["results"]]
    return E.annotate(rows, rows, envs.get), envs


def _s4():
    rows, envs = _annotated(os.path.join(ROOT, "docs", "data", "h200-s4-2026-11-29.json"))
    return {(r.workload, r.variant): r for r in rows}, envs


def test_shipped_h200_results_have_their_expected_figures_and_sources():
    by, _ = _s4()
    tf32 = by[("resnet50-train", "tf32")].derived.expected
    assert tf32.basis == "published" and tf32.figure == 2259.0
    assert tf32.published.source.startswith(LAMBDA) and tf32.published.date == "2024-10"
    assert 0.97 < tf32.ratio < 1.0 and not tf32.below
    assert tf32.model.value and tf32.model.ratio > 0       # the model's figure beside it
    fp32 = by[("resnet50-train", "fp32")].derived.expected           # no H200 FP32 figure published
    assert fp32.basis == "model" and not fp32.like_for_like and not fp32.below
    bert = by[("bert-large-train", "amp-bf16")].derived.expected
    assert bert.basis == "model" and not bert.like_for_like and bert.model.how
    ieee = by[("bert-large-train", "seed")].derived.expected            # IEEE FP32: nothing like it published,
    assert ieee.basis == "model" and ieee.source.startswith("model: physics") and not ieee.below   # the roofline
    assert "that evidence is this figure" in ieee.source                 # data/ceilings.csv holds this very run
    for key, r in by.items():                                            # every ResNet-50 result has one
        if r.status == "ok" and key[0] == "resnet50-train":
            assert r.derived.expected is not None, key


def test_no_shipped_h200_result_is_below_expected():
    """The bundles come from a healthy H200: nothing in them may be flagged."""
    n = 0
    for path in BUNDLES:
        rows, _ = _annotated(path)
        for r in rows:
            e = r.derived.expected
            n += e is not None
            assert not (e and e.below), (path, r.workload, r.variant, e)
            assert not any(w.startswith("below-expected") for w in r.all_warnings)
    assert n >= 40


def test_a_power_capped_card_is_flagged_with_that_cause():
    by, envs = _s4()
    r = copy.deepcopy(by[("resnet50-train", "tf32")].row())
    r["throughput_median"] = 1400.0
    r["throughput"].update(median=1400.0, mean=1400.0, ci95_low=1390.0, ci95_high=1410.0)
    fp = copy.deepcopy(envs[r["env_id"]])
    fp["gpus"][0]["power_limit_w"] = 450.0                              # on a 700 W card
    r = validated(r)
    (out,) = E.annotate([r], [r], {r.env_id: fp}.get)
    e = out.derived.expected
    assert e.below and e.basis == "published"
    assert e.causes == ["power limit 450 W, below the card's 700 W"]
    (flag,) = [w for w in out.all_warnings if w.startswith("below-expected")]
    assert "0.62x the expected 2,259 images/s" in flag and LAMBDA in flag and "power limit 450 W" in flag
    (healthy,) = E.annotate([r], [r], envs.get)                          # the same figure, true fingerprint
    assert healthy.derived.expected.below
    assert "no cause recorded" in [w for w in healthy.all_warnings if w.startswith("below")][0]


def _result(gpu: str, thr: float, **over) -> dict:
    return validated({
            "id": 1, "case_key": "k", "workload": "resnet50-train", "variant": "amp-bf16+channels-last", "status": "ok",
            "source": "measured", "size": "full", "gpus": 1, "device": "cuda:0", "device_name": gpu,
            "params": {"batch_size": 999, "image_size": 224}, "precision": "bf16", "unit": "images/s",
            "throughput_median": thr, "throughput": {"n": 5, "median": thr, "mean": thr,
                                                     "ci95_low": thr * 0.99, "ci95_high": thr * 1.01},
            "warnings": [], "extra": {}, **over})


def test_the_same_recipe_on_other_gpus_is_a_like_for_like_model():
    pool = [_result("NVIDIA A100-SXM4-80GB", 2000.0), _result("NVIDIA H100 80GB HBM3", 4000.0)]
    slow = _result("NVIDIA H100 80GB HBM3", 1000.0, id=3)
    e = E.expect(slow, pool + [slow], [], None)
    assert e["basis"] == "model" and e["model"]["same_recipe"] and e["like_for_like"]
    assert e["below"] and e["causes"] == []


def test_causes_read_from_the_fingerprint():
    static = {"index": 0, "power_limit_w": 700, "sm_clock_max_mhz": 1980, "pcie_gen": 4, "pcie_gen_max": 5,
              "pcie_width": 8, "pcie_width_max": 16, "mig_mode": 1}
    vol = {"index": 0, "app_sm_clock_mhz": 1200, "ecc_uncorrected": 2, "other_processes": 1, "numa_node": 1}
    fp = {"gpus": [static], "gpus_volatile": [vol],
          "host_volatile": {"cpu_governor": "powersave", "allowed_cpus_per_numa_node": {"0": 8, "1": 0}}}
    r = validated({"id": 1, "case_key": "k", "workload": "matmul", "variant": "seed", "status": "ok", "params": {},
                   "throughput_median": 1.0,
                   "device": "cuda:0", "gpus": 1, "telemetry": [{"t": 0, "reasons": 0x4}, {"t": 1, "reasons": 0x40}]})
    got = C.causes(r, fp, tdp_w=700, card_pcie_gen=5)
    assert got[0] == "throttled during the run (hw_thermal, sw_power_cap)"
    text = " | ".join(got)
    for part in ("SM clocks capped at 1200 MHz", "PCIe link gen 4 x8, below the card's gen 5 x16",
                 "2 uncorrected ECC error(s)", "MIG enabled", "1 other process(es)",
                 "governor 'powersave'", "no CPU of NUMA node 1"):
        assert part in text, part
    assert "power limit" not in text
    assert C.causes(validated({**r.row(), "device": "cpu", "telemetry": None}), None) == []


def test_results_shows_the_expected_figure(cli, tmp_path):
    db = str(tmp_path / "h200.db")
    assert cli("import", os.path.join(ROOT, "docs", "data", "h200-s4-2026-11-29.json"), "--db", db).returncode == 0
    out = cli("results", "--db", db, "-w", "resnet50-train", "--format", "json")
    rows = {r["variant"]: r for r in json.loads(out.stdout)}
    assert rows["tf32"]["extra"]["expected"]["published"]["source"].startswith(LAMBDA)
    table = cli("results", "--db", db, "-w", "resnet50-train", env={"COLUMNS": "220"}).stdout
    assert "vs expected" in table and "0.99x of 2,259 (published)" in table


def test_across_the_shipped_bundles_the_same_recipe_on_the_same_gpu_is_the_reference():
    """All the bundles in one pool (as after importing them): a result's expected figure is then the
    median of the same recipe on the same GPU model in the other runs.  Two results lie below their band,
    neither explained by the fingerprint (the flags say so): the first eager SD v1.5 at batch 1
    (2026-11-29, run 20261129-152403-156b8a; noisy, launch-bound: README, "Method"), at about half the later
    runs' figure; and the 2026-12-01 doctor's ResNet-50 step (run 20261201-161440-03b783: 24 ms a step at
    batch 64, 2,669 images/s), at 0.67x the same recipe in the two 2026-12-04 doctor runs (16 ms, 3,995) on
    the same torch 2.11 and clocks: a step bound by something the run did not record, which the same-recipe
    reference exposes."""
    rows, envs = [], {}
    for i, path in enumerate(BUNDLES):
        b = json.load(open(path))
        envs.update({i * 10**6 + e["id"]: e["fingerprint"] for e in b["environments"]})
        rows += [validated(dict(r, env_id=i * 10**6 + r["env_id"])) for r in b["results"]]
    out = E.annotate(rows, rows, envs.get)
    below = {(r.workload, r.variant, r.run_id): r.derived.expected for r in out
             if r.derived.expected and r.derived.expected.below}
    assert set(below) == {("sd15-generate", "seed", "20261129-152403-156b8a"),
                          ("resnet50-train", "amp-bf16+channels-last", "20261201-161440-03b783")}
    e = below[("sd15-generate", "seed", "20261129-152403-156b8a")]
    assert e.basis == "stored" and e.stored.n == 2 and 0.5 < e.ratio < 0.6 and e.causes == []
    e = below[("resnet50-train", "amp-bf16+channels-last", "20261201-161440-03b783")]
    assert e.basis == "stored" and 0.6 < e.ratio < 0.7 and e.causes == []
    bf16 = next(r for r in out if r.workload == "matmul" and r.params["dtype"] == "bf16"
                and r.params["m"] == 8192 and r.run_id.startswith("20261129-15"))
    assert bf16.derived.expected.basis == "stored" and not bf16.derived.expected.below
