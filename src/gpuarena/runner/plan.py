"""What a run will measure: the cases of a suite (or of ``-w``), expanded for the device and
fitted to this host, or the missing cases of a run being resumed.  Nothing is written here."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuarena.errors import UserError
from gpuarena.runner.guard import check_device, default_device, plan_cases


@dataclass
class Plan:
    """The cases a session runs.  ``run_id`` is None for a new run (the session creates it)."""

    device: str
    suite_name: str
    cases: list                 # every planned case of the run
    todo: list                  # the ones still to measure
    run_id: str | None = None
    notes: list[str] = field(default_factory=list)     # warnings: cases dropped, ...
    info: list[str] = field(default_factory=list)      # what a resume found
    size_note: str | None = None                       # the size an ad-hoc run chose for the device


def default_suite(device: str) -> str:
    from gpuarena.spec.suite import builtin_names

    if device.startswith("cuda"):
        return "seed-a100-a800" if "seed-a100-a800" in builtin_names() else "seed-resnet50"
    return "smoke"


def select_workloads(spec, workloads: list[str]):
    """The suite cut to its entries for the given workloads (`--suite S -w W`)."""
    from gpuarena.errors import did_you_mean

    have = [e.workload for e in spec.entries]
    for w in workloads:
        if w not in have:
            raise UserError(f"suite {spec.name} has no entry for workload {w!r}"
                            f"{did_you_mean(w, sorted(set(have)))}; it runs: {', '.join(dict.fromkeys(have))}")
    return spec.model_copy(update={"entries": [e for e in spec.entries if e.workload in workloads]})


def method_of(sets: list[str], repeats: int | None, processes: int | None, size: str | None):
    """(workload parameters, measurement method) from ``--set`` and the method options."""
    from gpuarena.spec.model import Method
    from gpuarena.spec.suite import parse_sets

    params, method = parse_sets(sets)
    if repeats is not None:
        if repeats < 1 or repeats > 1000:
            raise UserError(f"--repeats {repeats}: must be between 1 and 1000")
        method = method.merged(Method(repeats=repeats))
    if processes is not None:
        if processes < 1 or processes > 100:
            raise UserError(f"--processes {processes}: must be between 1 and 100")
        method = method.merged(Method(processes=processes))
    if size is not None:
        if size not in ("tiny", "full"):
            raise UserError(f"--size {size!r}: choose tiny or full")
        method = method.merged(Method(size=size))
    return params, method


def _spec(suite, workloads, variants, gpu_counts, device, method):
    """(suite spec, method, a note on the size chosen): ``-w`` alone is an ad-hoc suite, sized
    for the device unless ``--size`` says otherwise."""
    from gpuarena.spec.model import Method
    from gpuarena.spec.suite import adhoc_suite, load_suite

    if workloads and not suite:
        spec = adhoc_suite(workloads, variants, gpu_counts)
        if method.size is not None:
            return spec, method, None
        cpu = device == "cpu"   # the article's ResNet-50 on a CPU holds 22 GB for 20+ minutes
        method = method.merged(Method(size="tiny" if cpu else "full"))
        return spec, method, (f"size {method.size} (the {'CPU' if cpu else 'GPU'} default; "
                              f"--size {'full' if cpu else 'tiny'} for {'the article' if cpu else 'a quick check'})")
    spec = load_suite(suite or default_suite(device))
    if variants:
        raise UserError("--variant selects variants of --workload; a suite names its own")
    if workloads:   # --suite S -w W: only S's entries for those workloads
        spec = select_workloads(spec, workloads)
    if gpu_counts:
        for e in spec.entries:
            e.gpus = gpu_counts
    return spec, method, None


def plan_new(suite: str | None, workloads: list[str], variants: list[str], sets: list[str], size: str | None,
             repeats: int | None, processes: int | None, device: str | None,
             gpu_counts: list[int] | None) -> Plan:
    """The cases of a new run, expanded for the device and fitted to this host."""
    from gpuarena.runner.torchrun import fit_to_host
    from gpuarena.spec.model import expand

    device = check_device(device or default_device())
    params, method = method_of(sets, repeats, processes, size)
    spec, method, size_note = _spec(suite, workloads, variants, gpu_counts, device, method)
    cases, notes = fit_to_host(expand(spec, device, method, params), device)
    return Plan(device, spec.name, cases, cases, notes=notes, size_note=size_note)


def plan_resume(store, run_id: str) -> Plan:
    """The missing cases of a stored run, which this process now holds (results kept from an
    earlier full disk are stored first)."""
    from gpuarena.store.pending import store_pending

    run_row = store.run(run_id)
    device = check_device(run_row["device"])  # a cuda run resumed here needs a GPU too
    cases = plan_cases(run_row)
    store.claim_run(run_id)          # one process measures a run at a time
    kept = store_pending(store, run_id, {c.key for c in cases})
    done = store.done_keys(run_id)
    todo = [c for c in cases if c.key not in done]
    info = [f"stored {kept} result(s) kept from an earlier full disk or store failure"] if kept else []
    return Plan(device, run_row["suite"], cases, todo, run_id=run_id,
                info=info + [f"resuming run {run_id}: {len(cases) - len(todo)} of {len(cases)} cases already stored"])
