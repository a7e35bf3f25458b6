"""Burn-in: sustained GEMM and copy load on every GPU at once, with the clocks, power, temperature
and clock-event (throttle) reasons sampled, and every GEMM result checked.

One thread per GPU in this process (the GPUs heat the room and share the power supply together, as
in production; a thread only launches kernels, so the interpreter lock is not the limit).  Each GPU
runs BF16 GEMMs of the exact-integer check (runner/gemm_check.py: every result compared with the
reference) on one stream and device-to-device copies on another, in windows of about ``window_s``
seconds; each window records the GEMM TFLOP/s and the copy GB/s achieved while both ran.  NVML is
sampled throughout (measure/telemetry.py).  The figures a reader wants:

- burst: the best window of the first BURST_S seconds (clocks not yet held down by heat);
- sustained: the median window of the last half of the run;
- sustained / burst, and the time until the first clock-event reason that slows the GPU
  (power cap, thermal, hardware slowdown, power brake; measure/telemetry.THROTTLE_BITS).
"""

from __future__ import annotations

import statistics
import threading
import time

import torch

from gpuarena.measure.telemetry import THROTTLE_BITS, Telemetry
from gpuarena.runner.gemm_check import GemmCheck

BURST_S = 10.0          # the burst: the best window before this many seconds
SAMPLE_S = 0.5          # NVML sampling interval
SERIES_POINTS = 120     # telemetry points kept in the evidence per GPU


def _sizes(device: torch.device) -> tuple[int, int]:
    """(GEMM n, copy bytes): 8192^3 and 1 GiB on a GPU, tiny on a CPU."""
    return (8192, 1 << 30) if device.type == "cuda" else (64, 1 << 20)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _worker(device: torch.device, seconds: float, window_s: float, out: dict) -> None:
    try:
        n, nbytes = _sizes(device)
        gemm = GemmCheck(device, "bf16", n)
        src = torch.ones(nbytes, dtype=torch.uint8, device=device)
        dst = torch.empty_like(src)
        copy_stream = torch.cuda.Stream(device) if device.type == "cuda" else None
        windows, per_batch = [], 4
        with Telemetry(device, interval=SAMPLE_S, max_points=10**6) as tel:
            t_start = time.perf_counter()
            while time.perf_counter() - t_start < seconds:
                t0 = time.perf_counter()
                for _ in range(per_batch):
                    gemm.run()
                    if copy_stream is not None:
                        with torch.cuda.stream(copy_stream):
                            dst.copy_(src)
                    else:
                        dst.copy_(src)
                _sync(device)
                dt = time.perf_counter() - t0
                windows.append({"t": round(t0 - t_start, 3), "s": dt,
                                "tflops": per_batch * gemm.flops / dt / 1e12,
                                "copy_gbs": per_batch * 2 * nbytes / dt / 1e9})
                per_batch = max(1, min(10_000, round(per_batch * window_s / max(dt, 1e-6))))
        out.update(summarise(windows, tel.samples if tel.available else None, seconds))
        out["correctness"] = gemm.result()
    except Exception as exc:      # an out-of-memory or a driver error is this GPU's failure, not the others'
        out["error"] = f"{type(exc).__name__}: {exc}"[:500]


def summarise(windows: list[dict], samples: list[dict] | None, seconds: float) -> dict:
    """Burst, sustained, their ratio, the first throttle, and the telemetry in brief."""
    out: dict = {"seconds": seconds, "windows": len(windows)}
    if not windows:
        return out
    early = [w["tflops"] for w in windows if w["t"] < min(BURST_S, seconds / 5)] or [windows[0]["tflops"]]
    late = [w for w in windows if w["t"] >= seconds / 2] or windows[-1:]
    out["burst_tflops"] = max(early)
    out["sustained_tflops"] = statistics.median(w["tflops"] for w in late)
    out["sustained_copy_gbs"] = statistics.median(w["copy_gbs"] for w in late)
    out["sustained_to_burst"] = out["sustained_tflops"] / out["burst_tflops"]
    if samples is None:
        out["telemetry"] = "no NVML on this device: clocks, power, temperature and throttle reasons not sampled"
        return out
    firsts: dict[str, float] = {}
    for s in samples:
        for bit, name in THROTTLE_BITS.items():
            if s.get("reasons", 0) & bit and name not in firsts:
                firsts[name] = round(s["t"], 1)
    out["first_throttle_s"] = min(firsts.values()) if firsts else None
    out["throttle_first_seen_s"] = firsts
    half = [s for s in samples if s["t"] >= seconds / 2] or samples
    col = lambda key, rows: [s[key] for s in rows if s.get(key) is not None]  # noqa: E731
    for key in ("sm_clock_mhz", "power_w", "temp_c"):
        if col(key, half):
            out[f"sustained_{key}"] = statistics.median(col(key, half))
    if col("temp_c", samples):
        out["temp_c_max"] = max(col("temp_c", samples))
    if col("sm_clock_mhz", samples):
        out["sm_clock_mhz_max"] = max(col("sm_clock_mhz", samples))
    step = max(1, len(samples) // SERIES_POINTS)
    out["series"] = [{k: s.get(k) for k in ("t", "sm_clock_mhz", "power_w", "temp_c", "reasons")}
                     for s in samples[::step]]
    return out


def burn(devices: list[str], seconds: float, window_s: float = 1.0) -> dict[str, dict]:
    """{device: outcome} after ``seconds`` of load on every device at once."""
    outs = {d: {} for d in devices}
    threads = [threading.Thread(target=_worker, args=(torch.device(d), seconds, window_s, outs[d]), daemon=True)
               for d in devices]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outs
