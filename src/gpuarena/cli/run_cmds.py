"""Verbs: run, list, results, env."""

from __future__ import annotations

import json
import signal
import sys
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gpuarena.cli import app
from gpuarena.cli.common import DbOption, check_format, open_store, resolve_run_ids
from gpuarena.cli.run_guard import check_environment, drives_local_server, plan_cases, release, server_environment
from gpuarena.errors import UserError


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def check_device(device: str) -> str:
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


def select_workloads(spec, workloads: list[str]):
    """The suite cut to its entries for the given workloads (`--suite S -w W`)."""
    from gpuarena.errors import did_you_mean

    have = [e.workload for e in spec.entries]
    for w in workloads:
        if w not in have:
            raise UserError(f"suite {spec.name} has no entry for workload {w!r}"
                            f"{did_you_mean(w, sorted(set(have)))}; it runs: {', '.join(dict.fromkeys(have))}")
    return spec.model_copy(update={"entries": [e for e in spec.entries if e.workload in workloads]})


def default_suite(device: str) -> str:
    from gpuarena.spec.suite import builtin_names

    if device.startswith("cuda"):
        return "seed-a100-a800" if "seed-a100-a800" in builtin_names() else "seed-resnet50"
    return "smoke"


def parse_gpus(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--gpus {text!r}: expected a list like 1,2,4") from None
    if not out or any(n < 1 or n > 1024 for n in out):
        raise UserError(f"--gpus {text!r}: each count must be between 1 and 1024")
    return out


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


@app.command()
def run(
    suite: Optional[str] = typer.Option(None, "--suite", "-s", metavar="SUITE", help="built-in suite name or a YAML file"),
    workload: list[str] = typer.Option([], "--workload", "-w", metavar="WORKLOAD", help="workload to run (repeatable); with --suite, only that suite's entries for it"),
    variant: list[str] = typer.Option([], "--variant", "-v", metavar="VARIANT", help="variant, e.g. amp-bf16+channels-last (repeatable)"),
    set_: list[str] = typer.Option([], "--set", metavar="KEY=VALUE", help="KEY=VALUE for a workload parameter or repeats/warmup/steps/timeout_s/size/processes"),
    size: Optional[str] = typer.Option(None, "--size", metavar="SIZE", help="tiny or full (the article's sizes); an ad-hoc -w run defaults to tiny on a CPU, full on a GPU"),
    repeats: Optional[int] = typer.Option(None, "--repeats", "-r", metavar="N", help="timed repeats per case (default 10)"),
    processes: Optional[int] = typer.Option(None, "--processes", "-p", metavar="N", help="fresh processes per case, each with its own warm-up and repeats (default 1); the interval is then over process means"),
    device: Optional[str] = typer.Option(None, "--device", "-d", metavar="DEVICE", help="cpu, cuda or cuda:N (default: cuda if present)"),
    gpus: Optional[str] = typer.Option(None, "--gpus", metavar="N,N,...", help="rank counts for multi-GPU workloads, e.g. 1,2,4"),
    resume: Optional[str] = typer.Option(None, "--resume", metavar="RUN_ID", help="finish run RUN_ID: only its missing cases run"),
    torchrun_arg: list[str] = typer.Option([], "--torchrun-arg", metavar="ARG", help="torchrun rendezvous option for multi-node runs, e.g. --nnodes=2 (repeatable; docs/multi-gpu.md)"),
    allow_busy: bool = typer.Option(False, "--allow-busy", help="run even if another process is using the GPU (CUDA only; a CPU run is never checked)"),
    db: Optional[str] = DbOption,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
) -> None:
    """Run a suite (default: sized for the device found) and store every result."""
    from gpuarena.measure.env import device_name, fingerprint, fingerprint_hash
    from gpuarena.report.console import print_table
    from gpuarena.report.html import after_run
    from gpuarena.runner.executor import StoreFailed, check_storable, clean_stale_workdirs, execute, store_pending
    from gpuarena.runner.torchrun import ELSEWHERE, export_args, fit_to_host
    from gpuarena.spec.model import Method, expand
    from gpuarena.spec.suite import adhoc_suite, load_suite, parse_sets

    console = Console(stderr=True)
    export_args(torchrun_arg)
    check_environment()
    size_note = None
    if resume:
        given = [name for name, v in (("--suite", suite), ("--workload", workload), ("--variant", variant),
                                      ("--set", set_), ("--repeats", repeats), ("--processes", processes),
                                      ("--device", device), ("--gpus", gpus)) if v not in (None, [], "")]
        if given:
            raise UserError(f"--resume finishes a run as it was planned; {', '.join(given)} cannot change it "
                            "(start a new run instead)")
        store = open_store(db, must_exist=True)
        run_row = store.run(resume)
        device = check_device(run_row["device"])  # a cuda run resumed here needs a GPU too
        cases = plan_cases(run_row)
        store.claim_run(resume)          # one process measures a run at a time
        store_pending(store, resume, console)
        done = store.done_keys(resume)
        todo = [c for c in cases if c.key not in done]
        run_id, suite_name = resume, run_row["suite"]
        console.print(f"resuming run {run_id}: {len(cases) - len(todo)} of {len(cases)} cases already stored")
    else:
        device = check_device(device or default_device())
        params, method = parse_sets(set_)
        if repeats is not None:
            if repeats < 1 or repeats > 1000:
                raise UserError(f"--repeats {repeats}: must be between 1 and 1000")
            method = method.merged(Method(repeats=repeats))
        if processes is not None:
            if processes < 1 or processes > 100:
                raise UserError(f"--processes {processes}: must be between 1 and 100")
            method = method.merged(Method(processes=processes))
        gpu_counts = parse_gpus(gpus)
        if size is not None:
            if size not in ("tiny", "full"):
                raise UserError(f"--size {size!r}: choose tiny or full")
            method = method.merged(Method(size=size))
        if workload and not suite:
            spec = adhoc_suite(workload, variant, gpu_counts)
            if method.size is None:   # the article's ResNet-50 on a CPU holds 22 GB for 20+ minutes
                method = method.merged(Method(size="tiny" if device == "cpu" else "full"))
                size_note = (f"size {method.size} (the {'CPU' if device == 'cpu' else 'GPU'} default; "
                             f"--size {'full' if device == 'cpu' else 'tiny'} for {'the article' if device == 'cpu' else 'a quick check'})")
        else:
            spec = load_suite(suite or default_suite(device))
            if variant:
                raise UserError("--variant selects variants of --workload; a suite names its own")
            if workload:   # --suite S -w W: only S's entries for those workloads
                spec = select_workloads(spec, workload)
            if gpu_counts:
                for e in spec.entries:
                    e.gpus = gpu_counts
        cases = expand(spec, device, method, params)
        cases, notes = fit_to_host(cases, device)
        for note in notes:
            console.print(f"[yellow]warning:[/] {note}")
        todo = cases
        suite_name = spec.name
        run_id = None
    # a CPU run is never checked (see measure/busy.py); a server endpoint-serve drives is meant to be there
    if device.startswith("cuda") and not drives_local_server(todo):
        from gpuarena.measure.busy import busy_message

        msg = busy_message(device)
        if msg and not allow_busy:
            raise UserError(msg + " (pass --allow-busy to run anyway)")
        if msg:
            console.print(f"[yellow]warning:[/] {msg}; running anyway (--allow-busy): figures may be low")
    fp = fingerprint()
    dname = device_name(fp, device)
    check_storable(todo, run_id or "new", dname)   # what could not be stored is never measured
    if not resume:
        store = open_store(db)  # only now: a refused command leaves no database behind
    clean_stale_workdirs()  # case folders of runners killed before they could clean up
    servers = server_environment(todo)
    if servers:
        fp["servers"] = servers
    env_id = store.env_id(fp, fingerprint_hash(fp))
    if run_id is None:
        run_id = store.create_run(suite_name, device, [c.model_dump() for c in cases], env_id, argv=sys.argv[1:])
        store.claim_run(run_id)
    console.print(f"run [bold]{run_id}[/] · suite {escape(suite_name)} · {len(todo)} case(s) on {escape(dname)} · "
                  f"db {escape(store.path)}" + (f" · {size_note}" if size_note else ""))
    # A pre-empted job gets SIGTERM, a closed terminal SIGHUP: end like Ctrl-C (the case's
    # process group is killed, the run marked interrupted) rather than dying with the child orphaned.
    try:
        signal.signal(signal.SIGTERM, _raise_interrupt)
        signal.signal(signal.SIGHUP, _raise_interrupt)
    except ValueError:  # not the main thread (run called from a library): leave signals alone
        pass
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, disable=quiet, transient=False) as progress:
            task = progress.add_task("starting", total=len(todo))

            def on_start(i, case):
                progress.update(task, description=case.label()[:70])

            def on_done(i, outcome):
                r = outcome.result
                thr = (r.get("throughput") or {}).get("median")
                tail = f"{thr:,.1f} {r.get('unit')}" if thr else r.get("error") or ""
                # an error message is data: "[enforce fail ...]" is not rich markup
                progress.console.print(escape(f"  {r['status']:<7} {outcome.case.label()}  {tail}"))
                if outcome.refused:
                    progress.console.print(f"warning: {outcome.refused}", markup=False, soft_wrap=True)
                progress.advance(task)

            outcomes = execute(store, run_id, todo, env_id, dname, on_start, on_done)
    except StoreFailed as exc:
        release(store, run_id, "interrupted")
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        release(store, run_id, "interrupted")
        console.print(f"interrupted: finished cases are stored; `gpuarena run --resume {run_id}` finishes the run",
                      soft_wrap=True)
        raise typer.Exit(130) from None
    except Exception:  # anything else ends the run too: never left 'running' by a live-looking owner
        release(store, run_id, "interrupted")
        raise
    elsewhere = {o.case.key for o in outcomes if o.result.get("status") == ELSEWHERE}   # node 0 stores them
    missing = {c.key for c in cases} - store.done_keys(run_id) - elsewhere
    store.release_run(run_id, "complete" if not missing else "interrupted")
    stored = store.results([run_id])
    if not stored and elsewhere:
        console.print(f"run {run_id}: every case of this node is stored by node 0 (docs/multi-gpu.md)")
        return
    try:  # the run is stored: a failing table or report is a warning, never the run's exit code
        print_table(stored, title=f"run {run_id}")
        after_run(store, run_id, console)  # writes reports/<run id>.html and prints its path
    except Exception as exc:  # noqa: BLE001
        console.print(f"warning: the results are stored, but the after-run report failed "
                      f"({exc.__class__.__name__}: {str(exc)[:200]}); `gpuarena report` writes it later",
                      markup=False, soft_wrap=True)


@app.command("list")
def list_(fmt: str = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table or json")) -> None:
    """Workloads (with variants and parameters) and suites."""
    from gpuarena.spec.suite import builtin_names, load_suite
    from gpuarena.workloads import registry

    check_format(fmt, ("table", "json"))
    data = {"workloads": [], "suites": []}
    for name in registry.names():
        data["workloads"].append(registry.describe(registry.get(name)))
    for s in builtin_names():
        suite = load_suite(s)
        data["suites"].append({"name": s, "description": suite.description, "entries": len(suite.entries)})
    if fmt == "json":
        print(json.dumps(data, indent=2, default=str))
        return
    console = Console()
    for w in data["workloads"]:
        console.print(f"[bold]{escape(w['name'])}[/] (v{w['version']}, {w['launcher']}) {escape(w['description'])}"
                      + (f" [dim]-- {escape(w['source'])}[/]" if w["source"] else ""))
        for v, doc in w["variants"].items():
            console.print(f"    variant [cyan]{escape(v)}[/]: {escape(doc)}")
        if w["exclusive"] or w["alone"]:
            ex = "; ".join(" | ".join(g) for g in w["exclusive"])
            console.print(f"    combine with '+', except: one of {{{ex}}} at a time"
                          + (f"; {', '.join(w['alone'])} stands alone" if w["alone"] else ""))
        for p in w["params"]:
            rng = ""
            if p["choices"]:
                rng = f" one of {', '.join(map(str, p['choices']))}"
            elif p["min"] is not None or p["max"] is not None:
                rng = f" in [{p['min']}, {p['max']}]"
            console.print(escape(f"    --set {p['name']}={p['default']} ({p['type']}{rng}; tiny {p['tiny']}): {p['doc']}"))
    console.print("\n[bold]suites[/]")
    for s in data["suites"]:
        console.print(f"  [cyan]{s['name']}[/]: {s['description']}")


@app.command()
def results(
    db: Optional[str] = DbOption,
    run: list[str] = typer.Option([], "--run", metavar="RUN_ID", help="run id (repeatable); default: all runs; 'latest' for the newest"),
    workload: Optional[str] = typer.Option(None, "--workload", "-w", metavar="WORKLOAD", help="workload name (see `gpuarena list`)"),
    fmt: str = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, json or csv"),
) -> None:
    """Stored results."""
    from gpuarena.analysis.derived import with_derived
    from gpuarena.analysis.expected import annotate
    from gpuarena.report.console import print_table, to_csv, to_json

    check_format(fmt, ("table", "json", "csv"))
    store = open_store(db, readonly=True)
    run_ids = resolve_run_ids(store, run)
    # Shares of the ceiling, scaling efficiencies and expected figures are derived from the stored results now.
    from gpuarena.analysis.rows import known_workload

    known_workload(store, workload)  # "-w zzz": did you mean, never "0 result(s)"
    everything = store.results()     # read and validated once: the rows shown and the ok rows they derive from
    rows = [r for r in everything if (not run_ids or r.get("run_id") in run_ids)
            and (workload is None or r["workload"] == workload)]
    pool = [r for r in everything if r["status"] == "ok"]
    rows = annotate(with_derived(rows, pool), pool, store.environment)
    if fmt == "json":
        print(to_json(rows))
    elif fmt == "csv":
        sys.stdout.write(to_csv(rows))
    else:
        print_table(rows, title=f"{len(rows)} result(s) in {store.path}")


@app.command()
def env(fmt: str = typer.Option("json", "--format", "-f", metavar="FORMAT", help="json")) -> None:
    """The environment fingerprint of this machine."""
    from gpuarena.measure.env import fingerprint, fingerprint_hash

    check_format(fmt, ("json",))
    fp = fingerprint()
    fp["hash"] = fingerprint_hash(fp)
    print(json.dumps(fp, indent=2, default=str))
