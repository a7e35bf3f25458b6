"""Device checks' expected figures from the catalog (analysis/verbs/expected_device.py): a copy, a host link, a
matmul and an all-reduce against the card's physics and the published shares, with nothing else in the
database; through the real store and `results --format json`."""

from __future__ import annotations

import copy
import json
import os

import pytest

from gpuarena.analysis.verbs.expected_device import expected_device
from gpuarena.errors import UserError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
H100 = "H100 80GB SXM5"


def test_a_copy_at_half_the_h100s_hbm_rate_is_below_expected():
    e = expected_device("copy", H100, measured=1622.0)
    assert e.basis == "catalog" and e.unit == "GB/s" and e.below
    assert 2_600 < e.low < e.figure < 3_350 and e.high <= 3_350          # never above the HBM3 rate
    assert "HBM3 bandwidth" in e.source and "micro_ceilings" not in e.source and "run 2026" in e.source
    assert not expected_device("copy", H100, measured=2_950.0).below


def test_a_gen4_speed_host_link_on_a_gen5_card_is_below_expected():
    slow = expected_device("h2d", H100, measured=30.0)
    assert slow.below and 49 < slow.low < 55.4 <= slow.figure + 0.1
    assert not expected_device("h2d", H100, measured=52.8).below        # nvbandwidth's H100 d2h: 52.77 GB/s
    slot = expected_device("d2h", H100, link=(4, 16), measured=26.0)  # the slot is gen4: a gen4 figure is normal
    assert not slot.below and slot.figure < 31.5 and "gen4 x16" in slot.causes[0]
    narrow = expected_device("h2d", H100, link=(5, 8))
    assert narrow.figure == pytest.approx(slow.figure / 2)


def test_matmul_per_dtype_in_tflops_with_a_band_for_a_sustained_product():
    bf16 = expected_device("matmul", H100, "bf16")
    assert bf16.unit == "TFLOP/s" and bf16.figure == pytest.approx(794.5) and bf16.ratio is None
    assert 0.18 <= bf16.band <= 0.30                   # a sustained 8192^3 under the power cap is normal
    assert not expected_device("matmul", H100, "bf16", measured=680.0).below
    assert expected_device("matmul", H100, "bf16", measured=400.0).below
    assert expected_device("matmul", "A100 80GB SXM4", "tf32").source.count("unverified") == 1   # borrowed
    with pytest.raises(UserError, match="dtype"):
        expected_device("matmul", H100)


def test_allreduce_busbw_by_regime_and_message_size():
    eight = expected_device("allreduce", H100, gpus=8)     # the ring is expected; NVLS (in the switch) tops it
    assert eight.figure == pytest.approx(370.0) and eight.high == pytest.approx(480.0) and eight.unit == "GB/s"
    assert not expected_device("allreduce", H100, gpus=8, measured=365.0).below         # NCCL_ALGO=RING
    assert expected_device("allreduce", H100, gpus=8, measured=240.0).below             # a slow link
    two = expected_device("allreduce", "H200", gpus=2, size_mb=256, measured=298.5)   # doctor's size, measured
    assert not two.below and two.figure < expected_device("allreduce", "H200", gpus=2).figure
    tiny = expected_device("allreduce", "H200", gpus=2, size_mb=1, measured=1.0)       # latency-bound: context
    assert not tiny.below and not tiny.like_for_like


def _bundle(workload: str, device: str, value: float, **params) -> dict:
    b = json.load(open(os.path.join(ROOT, "docs", "data", "h200-2026-11-29.json")))
    r = copy.deepcopy(next(r for r in b["results"] if r["workload"] == workload
                           and all(r["params"].get(k) == v for k, v in params.items())))
    r.update(device_name=device, throughput_median=value, run_id="20261204-000000-synthe")
    r["throughput"].update(median=value, mean=value, ci95_low=value * 0.99, ci95_high=value * 1.01)
    env = next(e for e in b["environments"] if e["id"] == r["env_id"])
    return {**b, "environments": [env], "results": [r]}


@pytest.mark.parametrize("workload,value,params,slow", [
    ("membw", 1622.0, {}, True), ("h2d", 30.0, {"pinned": True}, True), ("d2h", 30.0, {"pinned": True}, True),
    ("membw", 2950.0, {}, False), ("h2d", 53.0, {"pinned": True}, False)])
def test_a_slow_h100_alone_in_the_database_is_flagged_by_results(cli, tmp_path, workload, value, params, slow):
    bundle = tmp_path / "h100.json"
    bundle.write_text(json.dumps(_bundle(workload, "NVIDIA H100 80GB HBM3", value, **params)))
    db = str(tmp_path / "one.db")
    assert cli("import", str(bundle), "--db", db).returncode == 0
    (row,) = json.loads(cli("results", "--db", db, "--format", "json").stdout)
    e = row["expected"]
    assert e["below"] is slow and e["basis"] == "catalog" and e["unit"] == "GB/s"
    assert (0.45 < e["ratio"] < 0.6) if slow else (0.9 < e["ratio"] < 1.05)
    assert e["low"] < e["figure"] <= e["high"] and e["source"].startswith("catalog:")
    table = cli("results", "--db", db, env={"COLUMNS": "240"}).stdout
    assert ("below-expected" in table) is slow


def test_a_cards_own_published_figure_and_its_power_limit_set_its_matmul_expectation():
    own = expected_device("matmul", "A100 80GB PCIe", "bf16")          # its own mamf-finder row: 252.9
    assert own.figure == pytest.approx(252.9) and "another" not in own.source
    pcie = expected_device("matmul", "A100 40GB PCIe", "bf16")         # 250 W: the SXM4's 400 W clock not held
    assert pcie.figure < expected_device("matmul", "A100 80GB SXM4", "bf16").figure * 0.9
    assert "analysis/rows/power.py" in pcie.source


def test_another_generations_figure_is_context_and_never_flags():
    e = expected_device("matmul", "L40S", "bf16", measured=50.0)        # no Ada evidence: borrowed
    assert "unverified" in e.source and not e.like_for_like and not e.below
