"""cost's power figures are per GPU: a multi-GPU result stores its power summed over its ranks' devices."""

from __future__ import annotations

import pytest

from gpuarena.analysis.verbs import cost
from gpuarena.store.db import Store
from tests.analysis.conftest import result

PRICES = """prices:
  - gpu: H200 SXM 141GB
    purchase_usd: 30000
    market: street
    source: "a test's price"
    date: "2026"
    confidence: low
"""


def test_a_two_gpu_results_summed_power_is_halved_per_gpu(tmp_path):
    """docs/data/h200-x2-2026-11-29.json, allreduce of 256 MB on 2 H200s: power_w_mean 229.78 W is the two
    ranks' sum (runner/rank.py), about 115 W each; its energy (0.727 J per item at 298.5/s) implies 108 W per
    GPU.  cost called the sum the power of one GPU ("measured") and charged a fleet's TCO for it twice."""
    s = Store(str(tmp_path / "c.db"))
    s.add_result(result("NVIDIA H200", 256, [256 / 298.537], gpus=2, power_w_mean=229.78, power_w_max=229.78,
                        energy_j_per_item=0.726655, energy_source="nvml_energy_counter"))
    s.add_result(result("NVIDIA H200", 128, [128 / 150.0], power_w_mean=650.0, power_w_max=690.0))
    (tmp_path / "p.yaml").write_text(PRICES)
    prices = cost.catalog.load_prices(str(tmp_path / "p.yaml"))
    rows = {r.params["batch_size"]: r for r in
            cost.cost_table(s, workload="resnet50-train", basis="purchase", prices=prices).rows}
    two, one = rows[256], rows[128]
    assert two.power_w == pytest.approx(229.78 / 2) and two.power_basis == "measured"
    assert one.power_w == pytest.approx(650.0)
    assert two.tco_energy == pytest.approx(cost.tco(30000, 229.78 / 2, 1, 3, cost.DEFAULT_KWH_PRICE,
                                                       cost.DEFAULT_PUE, 0)["energy"])
    assert two.energy_basis == "measured (nvml_energy_counter)"
    s.close()


def test_an_eight_gpu_jobs_summed_power_is_not_refused_as_unphysical(tmp_path):
    """8 GPUs at 600 W each store 4,800 W: far above one H200's 875 W band, yet each card drew 600 W."""
    s = Store(str(tmp_path / "c.db"))
    s.add_result(result("NVIDIA H200", 256, [256 / 2000.0], gpus=8, power_w_mean=4800.0, power_w_max=5200.0))
    row = cost.cost_table(s, workload="resnet50-train").rows[0]
    assert row.power_w == pytest.approx(600.0) and row.power_basis == "measured"
    s.close()


def test_a_served_endpoint_on_four_gpus_is_charged_the_energy_of_four(tmp_path):
    """endpoint-serve with a local server on 4 GPUs (server_gpus=4): NVML read the runner's one GPU (400 W,
    0.4 J per token at 1,000 tokens/s).  cost divided that one GPU's power by 4 (100 W "per GPU", inside the
    H200's band) and gave 2.5 tokens/J, 4x what the server's four GPUs deliver (each drawing about as much)."""
    from tests.analysis.test_endpoint_decisions import served

    s = Store(str(tmp_path / "c.db"))
    r = served("NVIDIA H200", "vllm 0.11.0", "http://127.0.0.1:8000", 0.2, 0.010, [1.0, 1.0, 1.0])
    r["extra"]["server_gpus"] = 4
    s.add_result({**r, "energy_j_per_item": 0.4, "power_w_mean": 400.0, "power_w_max": 410.0})
    row = cost.cost_table(s, workload="endpoint-serve").rows[0]
    assert row.throughput == pytest.approx(250.0)                    # tokens/s per GPU
    assert row.items_per_joule == pytest.approx(1 / (0.4 * 4))
    assert row.energy_basis == "measured (NVML)" and row.power_w == pytest.approx(400.0)
    s.close()


def test_each_cost_row_says_how_many_gpus_its_result_ran_on(tmp_path):
    """A 1-GPU and a 2-GPU result of one setting gave two rows that read as duplicates (qa14b): the row and
    the table carry the GPU count."""
    from gpuarena.report.text.cost import render

    s = Store(str(tmp_path / "c.db"))
    s.add_result(result("NVIDIA H200", 128, [128 / 150.0], gpus=2))
    s.add_result(result("NVIDIA H200", 128, [128 / 151.0]))
    (tmp_path / "p.yaml").write_text(PRICES)
    prices = cost.catalog.load_prices(str(tmp_path / "p.yaml"))
    out = cost.cost_table(s, workload="resnet50-train", basis="purchase", prices=prices)
    assert sorted(r.ran_on_gpus for r in out.rows) == [1, 2]
    assert "GPUs run on" in render(out, "md")
    s.close()
