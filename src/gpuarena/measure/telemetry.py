"""NVML telemetry sampled in a background thread while a case is timed.

nvidia-smi -l 1 (the articles' method) samples once a second and sees only the
instant it looks; here NVML is read every ``interval`` seconds and energy is
taken from the GPU's total-energy counter (millijoules since driver load) at
both ends of the window (Volta+).  That counter advances in steps (every 100 ms
on an H200), so after the window the step is measured and measure/energy.py
uses the counter only over a window long enough for it, else the sampled power
integrated over the window.  Without NVML every figure is None: nothing is invented.
"""

from __future__ import annotations

import threading
import time

from gpuarena.measure.energy import counter_step, window_energy

STEP_PROBE_S = 0.5   # longest the counter is read after the window to see its step (3 changes)

# Clock-event reasons that mean the GPU slowed itself (nvml.h
# nvmlClocksEventReason*): software power cap, hardware slowdown, software and
# hardware thermal slowdown, hardware power brake.  Idle, application-clock
# settings and sync boost are not throttling.
THROTTLE_BITS = {
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "hw_power_brake",
}


def _nvml():
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml
    except Exception:
        return None


def nvml_handle(device):
    """NVML handle for a torch CUDA device (matched by UUID, since CUDA and NVML orders may differ)."""
    nv = _nvml()
    if nv is None or getattr(device, "type", None) != "cuda":
        return nv, None
    import torch

    index = device.index if device.index is not None else torch.cuda.current_device()
    try:
        uuid = str(torch.cuda.get_device_properties(index).uuid)
        return nv, nv.nvmlDeviceGetHandleByUUID(("GPU-" + uuid).encode())
    except Exception:
        try:
            return nv, nv.nvmlDeviceGetHandleByIndex(index)
        except Exception:
            return nv, None


class Telemetry:
    """Context manager: samples power, temperature, clocks, utilisation and throttle reasons."""

    def __init__(self, device, interval: float = 0.1, max_points: int = 600):
        self.nv, self.h = nvml_handle(device)
        self.interval = interval
        self.max_points = max_points
        self.samples: list[dict] = []
        self.reasons_seen = 0
        self._stop = threading.Event()
        self._thread = None
        self.energy_mj_start = self.energy_mj_end = None
        self.counter_step_s: float | None = None
        self.t0 = 0.0
        self.t1 = 0.0

    @property
    def available(self) -> bool:
        return self.h is not None

    def _read(self) -> dict:
        nv, h = self.nv, self.h
        s = {"t": time.perf_counter() - self.t0}
        for key, fn in (
            ("power_w", lambda: nv.nvmlDeviceGetPowerUsage(h) / 1e3),
            ("temp_c", lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
            ("sm_clock_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            ("mem_clock_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
            ("util_pct", lambda: nv.nvmlDeviceGetUtilizationRates(h).gpu),
        ):
            try:
                s[key] = fn()
            except Exception:
                s[key] = None
        try:
            reasons = nv.nvmlDeviceGetCurrentClocksThrottleReasons(h)
        except Exception:
            reasons = 0
        s["reasons"] = int(reasons)
        self.reasons_seen |= int(reasons)
        return s

    def _energy(self):
        try:
            return self.nv.nvmlDeviceGetTotalEnergyConsumption(self.h)
        except Exception:
            return None

    def _probe_counter_step(self) -> float | None:
        """Read the energy counter in a row until it has changed three times (or STEP_PROBE_S
        passed): the seconds between its updates on this device, now."""
        readings, changes, end = [], 0, time.perf_counter() + STEP_PROBE_S
        while changes < 3 and time.perf_counter() < end:
            e = self._energy()
            if e is None:
                return None
            changes += bool(readings) and e != readings[-1][1]
            readings.append((time.perf_counter(), e))
            time.sleep(0.001)
        return counter_step(readings)

    def _loop(self):
        while not self._stop.is_set():
            self.samples.append(self._read())
            self._stop.wait(self.interval)

    def __enter__(self):
        if self.available:
            self.energy_mj_start = self._energy()
        self.t0 = time.perf_counter()   # after the counter's read, as t1 is before its other read
        if self.available:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self.t1 = time.perf_counter()
        if self._thread is not None:
            self.energy_mj_end = self._energy()   # first: the counter brackets the window, not the reads after it
            self._stop.set()
            self._thread.join()
            self.samples.append(self._read())
            self.counter_step_s = self._probe_counter_step()
        return False

    def summary(self, items: float) -> dict:
        """Means, maxima, energy per item and the throttle verdict for the window."""
        out = {"power_w_mean": None, "power_w_max": None, "energy_j": None, "energy_j_per_item": None,
               "energy_source": None, "energy_check": None, "temp_c_max": None, "sm_clock_mhz_mean": None,
               "sm_clock_mhz_min": None, "throttled": None, "throttle_reasons": [], "telemetry": []}
        if not self.available or not self.samples:
            return out
        col = lambda k: [s[k] for s in self.samples if s.get(k) is not None]  # noqa: E731
        power, temp, clk = col("power_w"), col("temp_c"), col("sm_clock_mhz")
        if power:
            out["power_w_mean"] = sum(power) / len(power)
            out["power_w_max"] = max(power)
        if temp:
            out["temp_c_max"] = max(temp)
        if clk:
            out["sm_clock_mhz_mean"] = sum(clk) / len(clk)
            out["sm_clock_mhz_min"] = min(clk)
        counter_j = None
        if self.energy_mj_start is not None and self.energy_mj_end is not None:
            counter_j = (self.energy_mj_end - self.energy_mj_start) / 1e3
        out["energy_j"], out["energy_source"], out["energy_check"] = window_energy(
            counter_j, self.counter_step_s, self.t1 - self.t0, self.samples)
        if out["energy_j"] is not None and items > 0:
            out["energy_j_per_item"] = out["energy_j"] / items
        reasons = [name for bit, name in THROTTLE_BITS.items() if self.reasons_seen & bit]
        out["throttle_reasons"] = reasons
        # Clocks dropped: the lowest SM clock read during the busy window is more than
        # 10% under the mean (a steady clock at a lower level is the card's normal state).
        dropped = bool(clk) and min(clk) < 0.9 * (sum(clk) / len(clk))
        out["throttled"] = bool(reasons) or dropped
        step = max(1, len(self.samples) // self.max_points)
        out["telemetry"] = [{k: v for k, v in s.items()} for s in self.samples[::step]]
        return out
