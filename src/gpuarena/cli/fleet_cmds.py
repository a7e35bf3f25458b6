"""Verbs: doctor (is this machine's every GPU normal?) and fleet (which of many is the slow one?)."""

from __future__ import annotations

import sys
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from gpuarena.cli import app
from gpuarena.cli.common import DbOption, check_format, open_store, resolve_run_ids
from gpuarena.errors import UserError

FMT = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, md or json")


def _doctor_cases(device: str, n_gpus: int):
    """The doctor suite's cases for one device: tiny on a CPU (a size the suite sets, such as
    ResNet-50's batch of 64, gives way to the parameter's tiny value); the all-reduce once, over
    every GPU."""
    from gpuarena.runner.torchrun import fit_to_host
    from gpuarena.spec.model import Method, expand
    from gpuarena.spec.suite import load_suite
    from gpuarena.workloads import registry

    spec = load_suite("doctor")
    entries = []
    for e in spec.entries:
        if e.gpus != [1]:
            if n_gpus < 2 or device != "cuda:0":
                continue
            e = e.model_copy(update={"gpus": [n_gpus]})
        if device == "cpu":
            sized = registry.get(e.workload).param_map()
            e = e.model_copy(update={"params": {k: v for k, v in e.params.items() if sized[k].tiny is None}})
        entries.append(e)
    spec = spec.model_copy(update={"entries": entries})
    method = Method(size="tiny") if device == "cpu" else Method()
    return fit_to_host(expand(spec, device, method, {}), device)[0]


@app.command()
def doctor(db: Optional[str] = DbOption,
           device: Optional[str] = typer.Option(None, "--device", "-d", metavar="DEVICE",
                                                help="cpu, cuda (every GPU: the default where there is one) or cuda:N"),
           allow_busy: bool = typer.Option(False, "--allow-busy", help="run even if another process uses a GPU"),
           quiet: bool = typer.Option(False, "--quiet", "-q", help="no line per check while it runs"),
           fmt: str = FMT) -> None:
    """A short health check of every GPU (spec/suites/doctor.yaml) and a verdict per GPU; results are stored."""
    import torch

    from gpuarena.analysis import doctor as D
    from gpuarena.report.text.doctor import render as render_doctor
    from gpuarena.runner.guard import check_device, check_environment, default_device, release
    from gpuarena.measure.busy import busy_message
    from gpuarena.measure.env import device_name, fingerprint, fingerprint_hash
    from gpuarena.runner.executor import StoreFailed, execute

    check_format(fmt, ("table", "md", "json"))
    check_environment()
    device = check_device(device or default_device())
    n = torch.cuda.device_count() if device.startswith("cuda") else 0
    devices = [f"cuda:{i}" for i in range(n)] if device == "cuda" else [device]
    for d in devices if device.startswith("cuda") else []:
        msg = busy_message(d)
        if msg and not allow_busy:
            raise UserError(msg + " (pass --allow-busy to check it anyway)")
    console = Console(stderr=True)
    store = open_store(db)
    fp = fingerprint()
    env_id = store.env_id(fp, fingerprint_hash(fp))
    run_ids = []
    for d in devices:
        cases = _doctor_cases(d, n if device == "cuda" else 0)
        run_id = store.create_run("doctor", d, [c.model_dump() for c in cases], env_id, argv=sys.argv[1:])
        store.claim_run(run_id)
        run_ids.append(run_id)

        def on_done(i, outcome, d=d):
            r = outcome.result
            if not quiet:
                tail = f"{r['throughput_median']:,.1f} {r.get('unit')}" if r.get("throughput_median") else r.get("error") or ""
                console.print(escape(f"  {d} {r['status']:<7} {outcome.case.label()}  {tail}"))

        try:
            execute(store, run_id, cases, env_id, device_name(fp, d), None, on_done)
        except StoreFailed as exc:
            release(store, run_id, "interrupted")
            raise UserError(str(exc)) from None
        except BaseException:
            release(store, run_id, "interrupted")
            raise
        store.release_run(run_id, "complete")
    verdicts = D.verdicts(store.results(run_ids), store.results(status="ok"), fp, store.environment)
    typer.echo(render_doctor(verdicts, fmt), nl=False)
    if fmt != "json":
        console.print(f"stored as run(s) {', '.join(run_ids)} in {escape(store.path)}")


ENV_IDS = 10**9   # more than any one bundle's environment ids


@app.command()
def fleet(bundles: list[str] = typer.Argument(None, metavar="BUNDLE", hidden=True),
          db: Optional[str] = DbOption,
          run: list[str] = typer.Option([], "--run", metavar="RUN_ID", help="only these runs of the database (repeatable)"),
          suite: Optional[str] = typer.Option(None, "--suite", "-s", metavar="SUITE",
                                              help="only the database's runs of this suite (e.g. doctor)"),
          show_all: bool = typer.Option(False, "--all", help="every GPU and link, not only the outliers"),
          fmt: str = FMT) -> None:
    """Many hosts' runs of one suite, from BUNDLEs (`gpuarena export` on each host) or one database:
    each GPU and link against the fleet median (MAD), outliers flagged."""
    from gpuarena.analysis import fleet as F
    from gpuarena.report.text.fleet import render as render_fleet

    check_format(fmt, ("table", "md", "json"))
    results, envs = [], {}
    if bundles:
        if db or run or suite:
            raise UserError("give bundles or a database (--db, --run, --suite), not both")
        from gpuarena.store import bundle as B

        for i, path in enumerate(bundles):
            b = B.read(path)               # validated whole; a bad bundle is one line, exit 2
            for e in b.environments:       # env ids made unique across bundles
                envs[i * ENV_IDS + e.id] = e.fingerprint
            results += [r.replaced(env_id=i * ENV_IDS + r.env_id) if r.env_id is not None else r for r in b.results]
        lookup = envs.get
    else:
        store = open_store(db, readonly=True)
        run_ids = resolve_run_ids(store, run)
        if suite:
            run_ids += [x["id"] for x in store.runs() if x["suite"] == suite or x["suite"].startswith("import:")]
            if not run_ids:
                raise UserError(f"no run of suite {suite!r} in {store.path}")
        results = store.results(run_ids or None)
        if suite:   # imported rows keep their origin's suite only through their run: keep the suite's workloads
            from gpuarena.spec.suite import load_suite

            try:
                wanted = {e.workload for e in load_suite(suite).entries}
                results = [r for r in results if r.workload in wanted]
            except UserError:
                pass
        lookup = store.environment
    if not [r for r in results if r.status == "ok"]:
        raise UserError("no ok results to compare")
    typer.echo(render_fleet(F.analyse(results, lookup), fmt, show_all), nl=False)
