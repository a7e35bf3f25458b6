"""Energy over one timed stretch: NVML's energy counter where it can resolve it, else sampled power.

NVML's total-energy counter (millijoules since driver load) is not continuous: the board's power
monitor updates it in steps, and a read returns the energy up to the last update.  On an H200
(driver 580.159.04, read here 2026-12-02) it advanced every 100 ms (98-102 ms), each step that
period's energy (7.7 J idle, 69 J under a matrix product).  So two reads T seconds apart cover
a span anywhere in (T - step, T + step): over a CUDA-graph ResNet-50 window of 8.5 ms the
difference is 0 J or one whole step (25 J: stored as 3,000 W on a 700 W card), and over 0.4 s it
is off by up to a quarter (BERT and matmul results stored at 750-820 W).

The counter's energy is used only where its resolution supports it:

* the stretch lasts at least ``1 + 1 / COUNTER_TOLERANCE`` steps, so the mean power it gives is
  within COUNTER_TOLERANCE of the truth whatever the phase of the steps (step / (T - step));
* that mean power lies within the power sampled over the stretch, [min, max], widened by that
  bound plus SAMPLING_MARGIN (a sample is one reading of a power that moves between readings).

The step is the one measured on this device after the stretch (``counter_step``), never assumed.
Otherwise the energy is the sampled power integrated over the stretch (``mean_power_x_time``: the
time-weighted mean of the samples times the seconds), which by construction implies a mean power
between the lowest and the highest sample, over a stretch of at least POWER_AVERAGE_S: NVML reports
the power averaged over the last second on Ampere (except GA100) and newer, so a shorter stretch
has no energy at all (its record says why).  ``check`` records what the counter read and why it
was or was not used (stored as ``extra.energy``).
"""

from __future__ import annotations

import bisect
import math

COUNTER = "nvml_energy_counter"      # the counter's difference over the stretch
SAMPLED = "mean_power_x_time"        # the sampled power integrated over the stretch
COUNTER_TOLERANCE = 0.1              # largest share one counter step may move the mean power by
SAMPLING_MARGIN = 0.1                # how far a mean may lie outside the sampled power's range
# NVML's reported power (nvmlDeviceGetPowerUsage) is "averaged over 1 sec interval" on Ampere (except
# GA100) and newer (NVML API reference): over a shorter window the samples mostly show the second
# before it (helper qa13: a 0.42 s matmul on the H200 sampled at 216 W mean, some 690 W drawn).
POWER_AVERAGE_S = 1.0                # the shortest window whose sampled power is its energy


def counter_step(readings: list[tuple[float, float]]) -> float | None:
    """Seconds between updates of the counter, from (seconds, mJ) reads taken in a row: the longest
    gap between two reads at which it changed (None: fewer than two changes seen, step unknown)."""
    changes = [t for (t, e), (_, before) in zip(readings[1:], readings) if e != before]
    gaps = [b - a for a, b in zip(changes, changes[1:])]
    return max(gaps) if gaps else None


def _readings(samples: list[dict]) -> list[tuple[float, float]]:
    """(t, power_w) of the samples that read a power at a time: None or NaN is no reading."""
    return [(s["t"], s["power_w"]) for s in samples if s.get("power_w") is not None
            and math.isfinite(s["power_w"]) and math.isfinite(s.get("t", math.nan))]


def integrate_power(samples: list[dict], seconds: float) -> float | None:
    """Joules: the sampled power ("t" from the stretch's start, "power_w") integrated over
    [0, seconds] by trapezoids, linear between samples and held at the nearest one past either end."""
    pts = sorted(_readings(samples))
    if not pts or seconds <= 0:
        return None

    times = [t for t, _ in pts]

    def at(x: float) -> float:
        i = bisect.bisect_left(times, x)
        if i == 0 or i == len(pts):
            return pts[min(i, len(pts) - 1)][1]
        (t0, p0), (t1, p1) = pts[i - 1], pts[i]
        return p0 + (p1 - p0) * (x - t0) / (t1 - t0)

    knots = [0.0] + [t for t, _ in pts if 0.0 < t < seconds] + [seconds]
    return sum((b - a) * (at(a) + at(b)) / 2 for a, b in zip(knots, knots[1:]))


def check(counter_j: float | None, step_s: float | None, seconds: float,
          power: list[float]) -> tuple[bool, str]:
    """Whether the counter's joules over ``seconds`` are a measurement, and why not if not."""
    if counter_j is None:
        return False, "no energy counter"
    if not math.isfinite(counter_j):
        return False, f"the counter's difference ({counter_j}) is not a reading"
    if counter_j <= 0:
        return False, "the counter did not advance over the stretch"
    if step_s is None:
        return False, "the counter's step was not seen, so its resolution is unknown"
    if seconds <= step_s or step_s / (seconds - step_s) > COUNTER_TOLERANCE:
        return False, (f"the stretch ({seconds:.3g} s) is under {1 + 1 / COUNTER_TOLERANCE:g} of the "
                       f"counter's {step_s:.3g} s steps")
    if power:
        watts, slack = counter_j / seconds, step_s / (seconds - step_s) + SAMPLING_MARGIN
        lo, hi = min(power) * (1 - slack), max(power) * (1 + slack)
        if not lo <= watts <= hi:
            return False, (f"the counter's {watts:.4g} W mean lies outside the sampled "
                           f"{min(power):.4g}-{max(power):.4g} W widened to {lo:.4g}-{hi:.4g} W")
    return True, ""


def window_energy(counter_j: float | None, step_s: float | None, seconds: float,
                  samples: list[dict]) -> tuple[float | None, str | None, dict]:
    """(joules, source, record): the counter's difference if ``check`` passes, else the sampled
    power integrated; the record keeps both readings, the step and the reason."""
    power = [p for _, p in _readings(samples)]
    ok, why = check(counter_j, step_s, seconds, power)
    sampled = integrate_power(samples, seconds)
    sampled = sampled if sampled is not None and math.isfinite(sampled) else None
    record = {"window_s": seconds, "counter_j": counter_j, "counter_step_s": step_s,
              "sampled_j": sampled, "source": COUNTER if ok else (SAMPLED if sampled is not None else None)}
    if why:
        record["counter_not_used"] = why
    if ok:
        return counter_j, COUNTER, record
    if sampled is not None and seconds < POWER_AVERAGE_S:
        record["source"] = None
        record["sampled_not_used"] = (f"the window ({seconds:.3g} s) is shorter than the {POWER_AVERAGE_S:g} s over "
                                      "which NVML averages the power it reports (Ampere except GA100, and newer)")
        return None, None, record
    if sampled is None:
        return None, None, record
    return sampled, SAMPLED, record


def combined_source(sources) -> str | None:
    """The energy_source of figures combined over ranks or processes: theirs if they agree, else
    each one, '+'-joined (one rank's window may have been long enough for the counter, another's not)."""
    named = sorted({s for s in sources if s})
    return "+".join(named) or None
