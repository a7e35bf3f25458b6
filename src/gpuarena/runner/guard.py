"""What a run session checks before it writes a run, and how it lets a run go: the device
asked for, the environment variables a case reads, a GPU another process is using, a stored
plan this gpuarena may not read, and the run's lock released even when the disk refuses the
write."""

from __future__ import annotations

from gpuarena.errors import UserError


def release(store, run_id: str, status: str) -> None:
    try:
        store.release_run(run_id, status)
    except Exception:  # noqa: BLE001 -- a full or read-only disk: the run stays 'running', resumable
        pass


def plan_cases(run_row: dict) -> list:
    """The run's planned cases; a plan this gpuarena cannot read (a newer one wrote it) is one line."""
    from pydantic import ValidationError

    from gpuarena.errors import pydantic_error_line
    from gpuarena.spec.model import Case

    from gpuarena.workloads import registry

    try:
        cases = [Case(**c) for c in run_row["plan"]]
    except (ValidationError, TypeError) as exc:
        why = pydantic_error_line(exc) if isinstance(exc, ValidationError) else str(exc)
        raise UserError(f"run {run_row['id']}: its plan cannot be read by this gpuarena ({why[:200]}); "
                        "resume it with the gpuarena that started it") from None
    for c in cases:   # a plan edited by hand: its parameters checked as `--set` would check them
        try:
            wl = registry.get(c.workload)
            params = wl.resolve_params(c.params, c.size)
            wl.check_params(params)   # what planning checks (a path parameter's file)
            wl.check_variant(wl.parse_variant(c.variant), params)
        except UserError as exc:
            raise UserError(f"run {run_row['id']}: its plan names {c.label()[:100]}: {exc}") from None
    return cases


MIN_MEMORY_CAP_MB = 64


def check_environment() -> None:
    """The GPUARENA_* variables a case reads, checked before any run is written."""
    import math
    import os

    from gpuarena.runner.torchrun import pass_through

    cap = os.environ.get("GPUARENA_MEMORY_CAP_MB", "").strip()
    if cap:
        try:
            value = float(cap)
        except ValueError:
            value = math.nan
        # At least 64 MiB: on a CPU the cap bounds the address space a case adds, and torch's
        # thread arenas map tens of MiB; on CUDA the caching allocator takes 2-20 MiB segments.
        # A smaller cap would make every case fail, so it is refused before the run.
        if not math.isfinite(value) or value < MIN_MEMORY_CAP_MB or value > 2**40:
            raise UserError(f"GPUARENA_MEMORY_CAP_MB={cap[:50]!r}: expected a number of MiB from "
                            f"{MIN_MEMORY_CAP_MB} (below it no case can run)")
    from gpuarena.runner.zygote import START_ENV, START_MODES

    start = os.environ.get(START_ENV, "").strip()
    if start and start not in START_MODES:
        raise UserError(f"{START_ENV}={start[:50]!r}: expected 'server' (the default: case "
                        "children forked from a process that imported torch once) or 'spawn'")
    try:
        pass_through()
    except (UserError, ValueError) as exc:
        raise UserError(f"GPUARENA_TORCHRUN_ARGS: {str(exc)[:200]}") from None


def server_environment(cases: list) -> list[dict]:
    """What the servers a plan drives say about themselves (a workload's ``environment``
    classmethod, endpoint-serve's engine and models): part of the run's environment fingerprint."""
    from gpuarena.workloads import registry

    seen, out = set(), []
    for c in cases:
        env = getattr(registry.get(c.workload), "environment", None)
        key = (c.workload, c.params.get("base_url"), c.params.get("engine"))
        if env is not None and key not in seen:
            seen.add(key)
            out.append(env(c.params))
    return out


def drives_local_server(cases: list) -> bool:
    """Every case measures a server on this GPU (endpoint-serve): the GPU is busy by design."""
    from gpuarena.workloads import registry

    return bool(cases) and all(getattr(registry.get(c.workload), "drives_server", False) for c in cases)


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def check_device(device: str) -> str:
    """``device`` if this machine has it (cpu, cuda, cuda:N), else one line saying why not."""
    import torch

    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError):
        raise UserError(f"--device {device!r}: expected cpu, cuda or cuda:N") from None
    if dev.type not in ("cpu", "cuda"):
        raise UserError(f"--device {device!r}: expected cpu, cuda or cuda:N")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise UserError(f"--device {device}: no CUDA device is present (use --device cpu)")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise UserError(f"--device {device}: only {torch.cuda.device_count()} CUDA device(s) present")
    return device


def busy_guard(device: str, cases: list, allow_busy: bool) -> str | None:
    """Refuse a GPU another process is using (the figures would be low), unless ``allow_busy``:
    then the warning to show.  A CPU run is never checked (measure/busy.py); nor is a plan whose
    every case measures a server on this GPU (endpoint-serve: busy by design)."""
    if not device.startswith("cuda") or drives_local_server(cases):
        return None
    from gpuarena.measure.busy import busy_message

    msg = busy_message(device)
    if msg and not allow_busy:
        raise UserError(msg + " (pass --allow-busy to run anyway)")
    return f"{msg}; running anyway (--allow-busy): figures may be low" if msg else None
