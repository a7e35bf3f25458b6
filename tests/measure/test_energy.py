"""Energy per item never implies a mean power the instruments cannot support (measure/energy.py).

NVML's energy counter advances in steps (every 100 ms on an H200, read 2026-12-02): over a window
of a few steps its difference is off by up to a step at either end. The shipped H200 bundles hold
the results that made this visible; each test below is one of them, driven through Telemetry's
real arithmetic with the counter readings and power samples that window would have given.
"""

from __future__ import annotations

import pytest

from gpuarena.measure import energy
from gpuarena.measure.energy import counter_step, integrate_power
from tests.measure.test_untrusted_flags import sample, telemetry_with


def implied_watts(s: dict, seconds: float) -> float:
    return s["energy_j"] / seconds


def test_one_counter_step_over_a_cuda_graph_window_is_not_3000_watts():
    """docs/data/h200-s10: ResNet-50 batch 1, cuDNN-fused + CUDA graph, 10 steps in 8.45 ms at
    125.4 W sampled; the counter moved by one 25.6 J step, stored as 3,032 W on a 700 W card."""
    seconds = 0.00845
    tel = telemetry_with([sample(0.004, 1980, power=125.4), sample(0.0125, 1980, power=125.4)],
                         energy_mj=(9_000_000, 9_025_620), seconds=seconds)
    s = tel.summary(items=10)
    # neither instrument resolves 8 ms: no energy, rather than 3,000 W or the last second's average power
    assert s["energy_source"] is None and s["energy_j"] is None and s["energy_j_per_item"] is None
    check = s["energy_check"]
    assert check["counter_j"] == pytest.approx(25.62) and check["counter_step_s"] == 0.1
    assert check["sampled_j"] == pytest.approx(125.4 * seconds)
    assert "under 11 of the counter's 0.1 s steps" in check["counter_not_used"]
    assert "shorter than the 1 s over which NVML averages" in check["sampled_not_used"]


def test_a_window_of_four_steps_takes_neither_instrument():
    """docs/data/h200-2026-11-29 matmul n=8192: 0.435 s, samples 126-337 W, the counter read 346 J
    (796 W): a step at either end is a quarter of that window, and the samples, NVML's averages over
    the last second, mostly show the second before it (the matmul draws some 690 W).  No energy."""
    seconds = 0.435
    power = [126.0, 180.0, 240.0, 300.0, 337.0]
    samples = [sample(0.1 * i, 1980, power=p) for i, p in enumerate(power)]
    s = telemetry_with(samples, energy_mj=(1_000_000, 1_346_000), seconds=seconds).summary(items=51)
    assert s["energy_source"] is None and s["energy_j_per_item"] is None
    trapezoids = 0.1 * (126 + 180) / 2 + 0.1 * (180 + 240) / 2 + 0.1 * (240 + 300) / 2 \
        + 0.1 * (300 + 337) / 2 + 0.035 * 337
    assert s["energy_check"]["sampled_j"] == pytest.approx(trapezoids)      # kept in the record, not used
    assert "shorter than the 1 s" in s["energy_check"]["sampled_not_used"]


def test_a_second_long_window_takes_the_sampled_power_where_the_counter_is_refused():
    """At 1 s the averaged samples cover the window: with the counter's step unseen they give the energy."""
    samples = [sample(0.1 * i, 1980, power=500.0) for i in range(11)]
    s = telemetry_with(samples, energy_mj=(0, 500_000), seconds=1.0, step_s=None).summary(items=10)
    assert s["energy_source"] == energy.SAMPLED and s["energy_j"] == pytest.approx(500.0)
    assert "sampled_not_used" not in s["energy_check"]


def test_a_long_window_whose_counter_agrees_with_the_samples_takes_the_counter():
    """docs/data/h200-s11 llm-serve: 1.93 s at 680-684 W sampled; the counter's 1,363 J (706 W) is
    within a step (5%) and the sampling margin of them: it is the energy."""
    samples = [sample(0.1 * i, 1980, power=680.0 + (i % 3) * 2) for i in range(20)]
    s = telemetry_with(samples, energy_mj=(5_000_000, 6_363_000), seconds=1.93).summary(items=100)
    assert s["energy_source"] == energy.COUNTER and s["energy_j_per_item"] == pytest.approx(13.63)
    assert "counter_not_used" not in s["energy_check"]


def test_a_long_window_whose_counter_outruns_every_sample_does_not_take_it():
    """Long enough for the counter's resolution, but twice the highest power sampled: not a mean
    power the card showed, so the sampled power is the energy."""
    samples = [sample(0.1 * i, 1980, power=300.0) for i in range(25)]
    s = telemetry_with(samples, energy_mj=(0, 1_500_000), seconds=2.5).summary(items=10)
    assert s["energy_source"] == energy.SAMPLED and s["energy_j"] == pytest.approx(750.0)
    assert "lies outside the sampled 300-300 W" in s["energy_check"]["counter_not_used"]


def test_a_counter_whose_step_was_not_seen_is_not_used():
    samples = [sample(0.1 * i, 1980, power=400.0) for i in range(30)]
    s = telemetry_with(samples, energy_mj=(0, 1_200_000), seconds=3.0, step_s=None).summary(items=10)
    assert s["energy_source"] == energy.SAMPLED and s["energy_j"] == pytest.approx(1200.0)
    assert "resolution is unknown" in s["energy_check"]["counter_not_used"]


def test_counter_step_from_reads_in_a_row():
    """Reads every 4 ms (an NVML call's time on the H200) of a counter that updates every 100 ms."""
    reads = [(0.004 * i, 7_700 * ((0.004 * i + 0.03) // 0.1)) for i in range(80)]
    assert counter_step(reads) == pytest.approx(0.1, abs=0.004)
    assert counter_step(reads[:30]) is None          # one change seen: the step is unknown
    assert counter_step([(0.0, 5.0), (0.5, 5.0)]) is None


def test_integrate_power_holds_the_ends_and_ignores_missing_readings():
    samples = [{"t": 0.05, "power_w": 100.0}, {"t": 0.15, "power_w": None}, {"t": 0.25, "power_w": 300.0},
               {"t": 0.4, "power_w": 500.0}]     # the last read comes after the window's end (0.3 s)
    at_end = 300 + (500 - 300) * (0.3 - 0.25) / (0.4 - 0.25)       # linear between the samples either side
    assert integrate_power(samples, 0.3) == pytest.approx(0.05 * 100 + 0.2 * (100 + 300) / 2
                                                          + 0.05 * (300 + at_end) / 2)
    assert integrate_power([], 1.0) is None


def test_a_reading_that_is_not_a_number_is_no_reading():
    """A NaN power sample, or a NaN/inf counter difference, is no reading, wherever it falls: before,
    a NaN first among the samples refused a sound counter (min() of a list led by NaN is NaN) while a NaN
    later let it through, the integral became NaN (energy None, its record naming the samples as
    source), and a NaN counter with no samples was taken as the window's energy."""
    nan = float("nan")
    good = [{"t": 0.1, "power_w": 690.0}, {"t": 1.0, "power_w": 700.0}, {"t": 1.9, "power_w": 700.0}]
    for at in range(4):
        samples = good[:at] + [{"t": 0.5, "power_w": nan}] + good[at:]
        j, source, record = energy.window_energy(1390.0, 0.1, 2.0, samples)
        assert (j, source) == (1390.0, energy.COUNTER), at
        assert record["sampled_j"] == pytest.approx(integrate_power(good, 2.0))
    for counter in (nan, float("inf")):
        j, source, record = energy.window_energy(counter, 0.1, 2.0, [])
        assert (j, source, record["source"]) == (None, None, None)
        j, source, _ = energy.window_energy(counter, 0.1, 2.0, good)
        assert source == energy.SAMPLED and j == pytest.approx(integrate_power(good, 2.0))
    assert integrate_power([{"t": nan, "power_w": 500.0}, {"t": 0.5, "power_w": 300.0}], 1.0) == pytest.approx(300.0)
