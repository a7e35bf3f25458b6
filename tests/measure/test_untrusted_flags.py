"""Promise 5: results that should not be trusted carry a flag into `gpuarena
results` (table flags column, JSON warnings/throttled/extra): output that turned
to NaN, a spread above the threshold, a GPU that throttled."""

from __future__ import annotations

import json

import pytest

from gpuarena.cli import main
from gpuarena.measure import stats
from gpuarena.measure.telemetry import THROTTLE_BITS, Telemetry
from gpuarena.runner.measure_case import measure
from gpuarena.spec.model import Case
from gpuarena.store.db import Store
from gpuarena.workloads import registry


def results_output(capsys, db: str, fmt: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main(["results", "--db", db, "--format", fmt])
    assert exc.value.code == 0
    return capsys.readouterr().out


def test_nan_flag_from_the_articles_recipe(tmp_path, capsys):
    """The article's ResNet-50 (loss = output.sum(), SGD lr 0.1) diverges within ~12 steps
    at the tiny size; the measured path (in this process) flags it and the flag reaches results."""
    params = registry.get("resnet50-train").resolve_params({"lr": 0.1, "loss": "sum"}, size="tiny")
    case = Case(workload="resnet50-train", variant="seed", params=params,
                repeats=3, warmup=1, steps=4, timeout_s=300, size="tiny")
    r = measure(case)
    assert r["status"] == "ok"  # the speed was measured; the output is what is untrustworthy
    assert r["extra"]["nan"] is True
    assert any("NaN" in w for w in r["warnings"])

    db = str(tmp_path / "n.db")
    store = Store(db)
    run_id = store.create_run("nan", "cpu", [case.model_dump()], None)
    store.add_result({**r, "run_id": run_id, "case_key": case.key, "source": "measured"})
    store.close()
    (row,) = json.loads(results_output(capsys, db, "json"))
    assert row["extra"]["nan"] is True and any("NaN" in w for w in row["warnings"])
    table = results_output(capsys, db, "table")
    assert "NaN" in table.split("flags", 1)[1]


def test_spread_above_threshold_is_a_warning():
    steady = stats.summarize([100.0, 101.0, 99.0, 100.0, 100.5])
    noisy = stats.summarize([100.0, 140.0, 70.0, 120.0, 90.0])
    assert not any("spread" in w for w in stats.warnings_for(steady))
    (w,) = [w for w in stats.warnings_for(noisy) if "spread" in w]
    assert f"CV {noisy.cv:.1%}" in w and noisy.cv > stats.CV_WARN
    few = stats.warnings_for(stats.summarize([1.0, 1.0]))
    assert any("only 2 samples" in x for x in few)


def telemetry_with(samples: list[dict], reasons: int = 0, energy_mj=(None, None), seconds: float = 2.0,
                   step_s: float | None = 0.1) -> Telemetry:
    """A Telemetry whose NVML readings are the given sample dicts (the shape _read() returns), over a
    window of ``seconds``, with an energy counter that updates every ``step_s`` (an H200's: 100 ms)."""
    tel = Telemetry("cpu")
    tel.h = "sampled"          # what NVML would hand back; summary() only asks whether there is one
    tel.samples = samples
    tel.reasons_seen = reasons
    tel.t0, tel.t1 = 0.0, seconds
    tel.energy_mj_start, tel.energy_mj_end = energy_mj
    tel.counter_step_s = step_s
    return tel


def sample(t, clk, power=300.0, temp=60, reasons=0):
    return {"t": t, "power_w": power, "temp_c": temp, "sm_clock_mhz": clk, "mem_clock_mhz": 1593,
            "util_pct": 100, "reasons": reasons}


def test_throttle_by_reason_bits():
    tel = telemetry_with([sample(0.1 * i, 1980) for i in range(10)], reasons=0x4 | 0x40 | 0x1)
    s = tel.summary(items=1000)
    assert s["throttled"] is True
    assert s["throttle_reasons"] == ["sw_power_cap", "hw_thermal"]  # 0x1 (idle) is not throttling
    assert s["sm_clock_mhz_mean"] == 1980 and s["power_w_mean"] == 300.0
    assert s["energy_source"] == "mean_power_x_time" and s["energy_j_per_item"] == pytest.approx(300 * 2 / 1000)


def test_throttle_by_clock_drop_and_steady_clock():
    dropped = telemetry_with([sample(0, 1980), sample(0.1, 1980), sample(0.2, 1400), sample(0.3, 1980)])
    assert dropped.summary(items=10)["throttled"] is True
    steady = telemetry_with([sample(0.1 * i, 1410 if i % 2 else 1395) for i in range(20)],
                            energy_mj=(1_000_000, 1_600_000))
    s = steady.summary(items=100)
    assert s["throttled"] is False and s["throttle_reasons"] == []
    assert s["energy_source"] == "nvml_energy_counter" and s["energy_j_per_item"] == pytest.approx(6.0)
    assert all(bit in THROTTLE_BITS for bit in (0x4, 0x8, 0x20, 0x40, 0x80))


def test_a_counter_that_did_not_advance_is_not_zero_energy():
    """A window shorter than one step of NVML's energy counter reads 0 J: mean power x time instead."""
    tel = telemetry_with([sample(0.0, 1980, power=124.0), sample(0.05, 1980, power=124.0)],
                         energy_mj=(5_000_000, 5_000_000))
    s = tel.summary(items=5)
    assert s["energy_source"] == "mean_power_x_time" and s["energy_j_per_item"] == pytest.approx(124 * 2 / 5)


def test_no_nvml_means_no_invented_figures():
    s = Telemetry("cpu").summary(items=10)
    assert s["throttled"] is None and s["power_w_mean"] is None and s["telemetry"] == []


def test_flags_and_markup_reach_results(tmp_path, capsys):
    """Throttled and noisy rows show their flags; stored strings print as themselves, never as markup."""
    db = str(tmp_path / "f.db")
    store = Store(db)
    run_id = store.create_run("flags", "cuda", [], None)
    noisy = stats.summarize([100.0, 140.0, 70.0, 120.0, 90.0]).to_dict()
    store.add_result({"run_id": run_id, "case_key": "a", "workload": "resnet50-train", "variant": "seed",
                      "params": {"batch_size": 256}, "status": "ok", "throughput_median": noisy["median"],
                      "throughput": noisy, "throttled": True,
                      "warnings": ["GPU throttled during the timed window: sw_power_cap"]})
    store.add_result({"run_id": run_id, "case_key": "b", "workload": "resnet50-train", "variant": "seed[/]",
                      "params": {"batch_size": 2}, "status": "failed", "error": "[/] boom [bold]x"})
    store.close()
    table = results_output(capsys, db, "table")
    assert "throttled, noisy" in table
    assert "seed[/]" in table and "[/] boom [bold]x" in table
    rows = json.loads(results_output(capsys, db, "json"))
    assert rows[0]["throttled"] is True and "sw_power_cap" in rows[0]["warnings"][0]
    assert rows[1]["variant"] == "seed[/]"
    csv_text = results_output(capsys, db, "csv")
    assert "GPU throttled during the timed window" in csv_text
