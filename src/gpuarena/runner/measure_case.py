"""The measured path of one case, inside whatever process runs it.

setup -> first step (compilation happens here; timed and stored apart) ->
warm-up steps -> `repeats` timed windows of `steps` steps each, with NVML
sampling the whole timed stretch -> statistics from the raw windows.
"""

from __future__ import annotations

import math
import os
import resource
import time
import traceback

from gpuarena.errors import WorkloadSkipped
from gpuarena.measure import stats
from gpuarena.measure.telemetry import Telemetry
from gpuarena.measure.timing import WindowTimer
from gpuarena.spec.model import Case
from gpuarena.workloads import registry
from gpuarena.workloads.base import StepContext
from gpuarena.runner.executor import identity
from gpuarena.store.flags import FlagKind, as_flag
from gpuarena.workloads.capacity import is_oom

def resolve_device(spec: str):
    import torch

    dev = torch.device(spec)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("CUDA requested but torch.cuda.is_available() is False")
        if dev.index is None:
            dev = torch.device("cuda", 0)
        torch.cuda.set_device(dev)
    return dev


def apply_memory_cap(device) -> None:
    """GPUARENA_MEMORY_CAP_MB: a hard cap on what the case may allocate (a real limit, used
    by the fault tests and by users who share a card).  Applied after torch is imported."""
    cap = os.environ.get("GPUARENA_MEMORY_CAP_MB")
    if not cap:
        return
    cap_bytes = int(float(cap) * 2**20)
    if device.type == "cuda":
        import torch

        total = torch.cuda.get_device_properties(device).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, cap_bytes / total), device)
    else:
        # RLIMIT_AS bounds the whole address space, and importing torch alone maps
        # ~3.5 GB of it (libraries, thread arenas).  The cap is what the case may
        # add on top of that, so it means the same on CPU as on CUDA.  An allocation
        # past it fails with ENOMEM, which torch raises as "can't allocate memory".
        import psutil

        limit = psutil.Process().memory_info().vms + cap_bytes
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def measure(case: Case, rank: int = 0, world_size: int = 1, device_spec: str | None = None) -> dict:
    """Run one case and return the result fields it measured (no run id, no env)."""
    import torch

    wl_cls = registry.runnable(case.workload)   # the body: setup/step (imports torch, the model's libraries)
    out: dict = identity(case, wl_cls)   # the one result skeleton (runner/executor.py)
    try:
        device = resolve_device(device_spec or case.device)
        apply_memory_cap(device)
        torch.manual_seed(0)
        ctx = StepContext(device=device, variants=wl_cls.parse_variant(case.variant),
                          params=dict(case.params), rank=rank, world_size=world_size)
        wl = wl_cls(ctx)
        timer = WindowTimer(device)
        windows, tel = _run_timed(case, wl, timer, device, world_size, out)
        throughput = _record_speed(case, wl, windows, out)
        _record_telemetry(case, wl, tel, out)
        _record_memory(device, out)
        _record_flags(wl, ctx, out)
        out["status"] = "ok"
        if not all(math.isfinite(x) and x > 0 for x in throughput):
            out["status"] = "failed"
            out["error"] = "non-finite or non-positive throughput"
    except BaseException as exc:  # the case failed; the suite goes on
        if isinstance(exc, KeyboardInterrupt):
            raise
        _record_failure(exc, out)
    return out


def _run_timed(case: Case, wl, timer: WindowTimer, device, world_size: int,
               out: dict) -> tuple[list[float], Telemetry]:
    """setup, first step, warm-up, then the timed windows under telemetry; returns s/step per window."""
    import torch

    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    t_setup = time.perf_counter()
    wl.setup()
    timer.sync()
    out["extra"]["setup_s"] = time.perf_counter() - t_setup

    # First step: compilation, autotuning, cuDNN benchmark and lazy init land here.
    t_first = time.perf_counter()
    wl.step()
    timer.sync()
    first = time.perf_counter() - t_first
    if wl.uses_compile():
        out["compile_s"] = first
    out["extra"]["first_step_s"] = first

    for _ in range(case.warmup):
        wl.step()
    timer.sync()

    windows: list[float] = []
    with Telemetry(device) as tel:
        for _ in range(case.repeats):
            if world_size > 1:  # ranks start each timed window together (runner/rank.py)
                import torch.distributed as dist

                dist.barrier()
            windows.append(timer.time(wl.step, case.steps) / case.steps)
    return windows, tel


def _record_speed(case: Case, wl, windows: list[float], out: dict) -> list[float]:
    """Throughput, latency and TFLOP/s from the raw windows; returns items/s per window."""
    items = wl.items_per_step()
    throughput = [items / s for s in windows]
    tsum = stats.summarize(throughput, unit=out["unit"])
    lsum = stats.summarize(windows, unit="s/step")
    out["samples"] = windows
    out["throughput"] = tsum.to_dict()
    out["throughput_median"] = tsum.median
    out["latency"] = lsum.to_dict()
    out["items_per_step"] = items
    fpi = wl.flops_per_item()
    out["flops_per_item"] = fpi
    out["tflops"] = tsum.median * fpi / 1e12 if fpi else None
    out["precision"] = wl.precision()
    out["warnings"] += stats.warnings_for(tsum)
    return throughput


def _record_telemetry(case: Case, wl, tel: Telemetry, out: dict) -> None:
    total_items = out["items_per_step"] * case.steps * case.repeats
    # a workload that drives a server elsewhere (endpoint-serve, remote) says this GPU's power is not its own
    telemetry = tel.summary(total_items) if getattr(wl, "power_measured", True) else Telemetry(None).summary(0)
    out.update({k: telemetry[k] for k in ("power_w_mean", "power_w_max", "energy_j_per_item",
                                          "energy_source", "temp_c_max", "sm_clock_mhz_mean",
                                          "throttled", "telemetry")})
    if telemetry["energy_check"]:   # the counter's reading, its step and which source was used (measure/energy.py)
        out["extra"]["energy"] = telemetry["energy_check"]
    if telemetry["throttle_reasons"]:
        out["extra"]["throttle_reasons"] = telemetry["throttle_reasons"]
    if telemetry["throttled"]:
        out["warnings"].append("GPU throttled during the timed window: "
                               + (", ".join(telemetry["throttle_reasons"]) or "SM clock dropped > 10%"))


def _record_memory(device, out: dict) -> None:
    if device.type == "cuda":
        import torch

        out["peak_memory_bytes"] = torch.cuda.max_memory_allocated(device)
        out["extra"]["peak_reserved_bytes"] = torch.cuda.max_memory_reserved(device)
    else:
        out["peak_memory_bytes"] = None
        out["extra"]["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _record_flags(wl, ctx: StepContext, out: dict) -> None:
    flags = [as_flag(f) for f in wl.check() + ctx.notes]   # typed where they arise, never read from text
    out["warnings"] += [f.message for f in flags]
    if any(f.kind is FlagKind.nan for f in flags):
        out["extra"]["nan"] = True
    out["extra"].update(wl.extra())


def _record_failure(exc: BaseException, out: dict) -> None:
    """A skip is a skip; an OOM or any other error keeps its first line and the traceback's tail."""
    if isinstance(exc, WorkloadSkipped):
        out["status"], out["error"] = "skipped", str(exc)[:500]
        return
    out["status"] = "oom" if is_oom(exc) else "failed"
    lines = traceback.format_exception(exc)
    out["error"] = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:500]
    out["extra"]["traceback"] = "".join(lines)[-4000:]
