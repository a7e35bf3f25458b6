"""Verbs: run, list, results, env."""

from __future__ import annotations

import json
import sys
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gpuarena.cli.common import DbOption, check_format, open_store, resolve_run_ids
from gpuarena.safeio import printable
from gpuarena.errors import UserError

app = typer.Typer()   # this module's verbs; cli/app.py puts them on the root, at the top level


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


# run's options: what to run (a suite, or workloads with variants and parameters), how often, and where
RUN_SUITE = typer.Option(None, "--suite", "-s", metavar="SUITE", help="built-in suite name or a YAML file")
RUN_WORKLOAD = typer.Option([], "--workload", "-w", metavar="WORKLOAD",
                            help="workload to run (repeatable); with --suite, only that suite's entries for it")
RUN_VARIANT = typer.Option([], "--variant", "-v", metavar="VARIANT",
                           help="variant, e.g. amp-bf16+channels-last (repeatable)")
RUN_SET = typer.Option([], "--set", metavar="KEY=VALUE",
                       help="KEY=VALUE for a workload parameter or repeats/warmup/steps/timeout_s/size/processes")
RUN_SIZE = typer.Option(None, "--size", metavar="SIZE",
                        help="tiny or full (the article's sizes); an ad-hoc -w run defaults to tiny on a CPU, "
                             "full on a GPU")
RUN_REPEATS = typer.Option(None, "--repeats", "-r", metavar="N", help="timed repeats per case (default 10)")
RUN_PROCESSES = typer.Option(None, "--processes", "-p", metavar="N",
                             help="fresh processes per case, each with its own warm-up and repeats (default 1); "
                                  "the interval is then over process means")
RUN_DEVICE = typer.Option(None, "--device", "-d", metavar="DEVICE",
                          help="cpu, cuda or cuda:N (default: cuda if present)")
RUN_GPUS = typer.Option(None, "--gpus", metavar="N,N,...", help="rank counts for multi-GPU workloads, e.g. 1,2,4")
RUN_RESUME = typer.Option(None, "--resume", metavar="RUN_ID", help="finish run RUN_ID: only its missing cases run")
RUN_TORCHRUN_ARG = typer.Option([], "--torchrun-arg", metavar="ARG",
                                help="torchrun rendezvous option for multi-node runs, e.g. --nnodes=2 "
                                     "(repeatable; docs/multi-gpu.md)")
RUN_ALLOW_BUSY = typer.Option(False, "--allow-busy",
                              help="run even if another process is using the GPU (CUDA only; a CPU run is never "
                                   "checked)")


@app.command()
def run(
    suite: Optional[str] = RUN_SUITE,
    workload: list[str] = RUN_WORKLOAD,
    variant: list[str] = RUN_VARIANT,
    set_: list[str] = RUN_SET,
    size: Optional[str] = RUN_SIZE,
    repeats: Optional[int] = RUN_REPEATS,
    processes: Optional[int] = RUN_PROCESSES,
    device: Optional[str] = RUN_DEVICE,
    gpus: Optional[str] = RUN_GPUS,
    resume: Optional[str] = RUN_RESUME,
    torchrun_arg: list[str] = RUN_TORCHRUN_ARG,
    allow_busy: bool = RUN_ALLOW_BUSY,
    db: Optional[str] = DbOption,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
) -> None:
    """Run a suite (default: sized for the device found) and store every result."""
    from gpuarena.runner import session as S
    from gpuarena.runner.plan import plan_new, plan_resume

    console = Console(stderr=True)
    S.prepare(torchrun_arg)
    if resume:
        given = [name for name, v in (("--suite", suite), ("--workload", workload), ("--variant", variant),
                                      ("--set", set_), ("--repeats", repeats), ("--processes", processes),
                                      ("--device", device), ("--gpus", gpus)) if v not in (None, [], "")]
        if given:
            raise UserError(f"--resume finishes a run as it was planned; {', '.join(given)} cannot change it "
                            "(start a new run instead)")
        store = open_store(db, must_exist=True)
        plan = plan_resume(store, resume)
    else:
        plan = plan_new(suite, workload, variant, set_, size, repeats, processes, device, parse_gpus(gpus))
    for line in plan.info:
        console.print(line, markup=False, soft_wrap=True)
    for note in plan.notes:
        console.print(f"[yellow]warning:[/] {escape(note)}")
    s = S.open_session(plan, allow_busy, store if resume else (lambda: open_store(db)))
    for note in s.warnings:
        console.print(f"[yellow]warning:[/] {escape(note)}")
    console.print(f"run [bold]{s.run_id}[/] · suite {escape(plan.suite_name)} · {len(plan.todo)} case(s) on "
                  f"{escape(s.device_name)} · db {escape(s.store.path)}"
                  + (f" · {plan.size_note}" if plan.size_note else ""))
    try:
        finished = _measure(s, console, quiet)
    except KeyboardInterrupt:
        console.print(f"interrupted: finished cases are stored; `gpuarena run --resume {s.run_id}` finishes the run",
                      soft_wrap=True)
        raise typer.Exit(130) from None
    _show(s, finished, console)


def _measure(s, console, quiet: bool):
    """The session's cases under a progress bar, one line per finished case."""
    from gpuarena.runner import session as S

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, disable=quiet, transient=False) as progress:
        task = progress.add_task("starting", total=len(s.plan.todo))
        varying = _varying(s.plan.todo)

        def on_start(i, case):
            progress.update(task, description=_label(case, varying)[:70])

        def on_done(i, outcome):
            r = outcome.result
            thr = (r.get("throughput") or {}).get("median")
            tail = f"{thr:,.1f} {r.get('unit')}" if thr else r.get("error") or ""
            # an error message is data: "[enforce fail ...]" is not rich markup
            progress.console.print(escape(printable(f"  {r['status']:<7} {_label(outcome.case, varying)}  {tail}")))
            if outcome.refused:
                progress.console.print(f"warning: {outcome.refused}", markup=False, soft_wrap=True)
            progress.advance(task)

        return S.run(s, on_start, on_done)


def _varying(cases) -> list[str]:
    """The parameters whose values differ between a plan's cases: each progress line names them, so
    that `--set m=32,48` prints two lines that tell the cases apart."""
    keys = sorted({k for c in cases for k in c.params})
    return [k for k in keys if len({repr(c.params.get(k)) for c in cases}) > 1]


def _label(case, varying: list[str]) -> str:
    label = case.label()
    extra = [f"{k}={case.params[k]}" for k in varying if k in case.params and f" {k}=" not in f" {label}"]
    return " ".join([label, *extra])


def _show(s, finished, console) -> None:
    """The run's table, then its report (reports/<run id>.html, whose path is printed)."""
    from gpuarena.report.console import print_table
    from gpuarena.report.html import after_run

    if finished.elsewhere_only:
        console.print(f"run {s.run_id}: every case of this node is stored by node 0 (docs/multi-gpu.md)")
        return
    try:  # the run is stored: a failing table or report is a warning, never the run's exit code
        print_table(finished.stored, title=f"run {s.run_id}")
        after_run(s.store, s.run_id, console)  # writes reports/<run id>.html and prints its path
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
            console.print(escape(f"    --set {p['name']}={p['default']} ({p['type']}{rng}; tiny {p['tiny']}): "
                                 f"{p['doc']}"))
    console.print("\n[bold]suites[/]")
    for s in data["suites"]:
        console.print(f"  [cyan]{s['name']}[/]: {s['description']}")


@app.command()
def results(
    db: Optional[str] = DbOption,
    run: list[str] = typer.Option([], "--run", metavar="RUN_ID",
                                  help="run id (repeatable); default: all runs; 'latest' for the newest"),
    workload: Optional[str] = typer.Option(None, "--workload", "-w", metavar="WORKLOAD",
                                           help="workload name (see `gpuarena list`)"),
    fmt: str = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, json or csv"),
) -> None:
    """Stored results."""
    from gpuarena.analysis.rows.derived import with_derived
    from gpuarena.analysis.verbs.expected import annotate
    from gpuarena.report.console import print_table, to_csv, to_json

    check_format(fmt, ("table", "json", "csv"))
    store = open_store(db, readonly=True)
    run_ids = resolve_run_ids(store, run)
    # Shares of the ceiling, scaling efficiencies and expected figures are derived from the stored results now.
    from gpuarena.analysis.rows.common import known_workload

    known_workload(store, workload)  # "-w zzz": did you mean, never "0 result(s)"
    everything = store.results()     # read and validated once: the rows shown and the ok rows they derive from
    rows = [r for r in everything if (not run_ids or r.run_id in run_ids)
            and (workload is None or r.workload == workload)]
    pool = [r for r in everything if r.status == "ok"]
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
