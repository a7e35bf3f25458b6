"""Verbs: doctor (is this machine's every GPU normal?) and fleet (which of many is the slow one?)."""

from __future__ import annotations

import os
import socket
import sys
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from gpuarena.cli.common import DbOption, check_format, open_store, resolve_run_ids
from gpuarena.errors import UserError
from gpuarena.numbers import fmt_num

app = typer.Typer()   # this module's verbs; cli/app.py puts them on the root, at the top level

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


DOCTOR_HELP = """A health and acceptance check of every GPU, with a verdict per GPU and per link; results stored.

Checks (spec/suites/doctor.yaml): matmul TFLOP/s per dtype, device copy and pinned host-link GB/s, a
small ResNet-50 training step, an all-reduce over the host's GPUs; then every GEMM result compared
with an exact reference, a memory test over most of the free memory, the NVML error counters
(ECC, row remapping, retired pages) before and after and the XID events between, and the peer
bandwidth of every pair of GPUs.  --level burn-in adds MINUTES of GEMM and copy load on every GPU at
once with clocks, power, temperature and throttle reasons sampled (time to first throttle,
sustained/burst).

Each run writes an evidence bundle (--bundle): the results, the fingerprint (serials, UUIDs, driver,
VBIOS, PCIe link state), the acceptance evidence and a SHA-256 of it; `gpuarena fleet` reads them.

Exit codes: 0 every GPU and link OK (or CHECK: a state worth a look, figures within expected);
1 a GPU or link SLOW, WRONG (a wrong result, a memory or XID error) or FAIL (a check did not
complete); 2 a usage error."""


def _doctor_suite(store, d: str, n_gpus: int, env_id: int, fp: dict, console, quiet: bool, run_ids: list) -> None:
    """The doctor suite's speed checks on one device, stored as a run; its id added to ``run_ids`` as
    soon as the run exists (an interrupted doctor names it)."""
    from gpuarena.measure.env import device_name
    from gpuarena.workloads import registry
    from gpuarena.runner.executor import StoreFailed, execute
    from gpuarena.runner.guard import release

    cases = _doctor_cases(d, n_gpus)
    run_id = store.create_run("doctor", d, [c.model_dump() for c in cases], env_id, argv=sys.argv[1:])
    store.claim_run(run_id)
    run_ids.append(run_id)

    def on_done(i, outcome):
        r = outcome.result
        if not quiet:
            matmul = registry.has(r.get("workload"), device_figure="compute-peak")
            tail = (f"{fmt_num(r['tflops'])} TFLOP/s" if r.get("tflops") and matmul
                    else f"{r['throughput_median']:,.1f} {r.get('unit')}" if r.get("throughput_median")
                    else r.get("error") or "")
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


def _doctor_checks(store, devices: list[str], n_gpus: int, env_id: int, fp: dict, console, quiet: bool,
                   level: str, minutes: Optional[float]) -> tuple[list[str], dict]:
    """The suite on each device, then the acceptance checks: (run ids, evidence).  SIGTERM or SIGHUP (a
    pre-empted job, a closed terminal) or Ctrl-C ends doctor as it ends `run`: one line, exit code 130."""
    from gpuarena.runner import acceptance
    from gpuarena.runner.session import end_like_ctrl_c

    end_like_ctrl_c()
    run_ids: list[str] = []
    try:
        for d in devices:
            _doctor_suite(store, d, n_gpus, env_id, fp, console, quiet, run_ids)
        if not quiet:
            console.print(escape(f"  acceptance ({level}{f', {minutes:g} min of load' if minutes else ''}): "
                                 "GEMM results against the exact reference, memory test, error counters, links"))
        return run_ids, acceptance.run(devices, level, minutes or 0.0)
    except KeyboardInterrupt:   # a suite cut short is marked interrupted by _doctor_suite; its finished checks kept
        stored = ", ".join(run_ids) or "none"
        console.print(escape(f"interrupted: finished checks are stored (run(s) {stored}); no evidence bundle "
                             "written; run `gpuarena doctor` again for a verdict"), soft_wrap=True)
        raise typer.Exit(130) from None


def _levels(level: str, minutes: Optional[float]) -> Optional[float]:
    """--level and --minutes checked together; the burn-in's minutes (10 when not given)."""
    from gpuarena.runner.acceptance import LEVELS

    if level not in LEVELS:
        raise UserError(f"--level {level!r}: one of {', '.join(LEVELS)}")
    if minutes is not None and level != "burn-in":
        raise UserError("--minutes applies to --level burn-in only")
    minutes = 10.0 if minutes is None and level == "burn-in" else minutes
    if minutes is not None and not (0 < minutes <= 7 * 24 * 60):
        raise UserError(f"--minutes {minutes:g}: more than 0 and at most a week")
    return minutes


def _bundle_path(path: Optional[str], fp: dict) -> str:
    import datetime as dt
    import re

    if path:
        parent = os.path.dirname(os.path.abspath(path))
        if os.path.isdir(path) or not os.path.isdir(parent) or not os.access(parent, os.W_OK):
            raise UserError(f"--bundle {path}: not a file in a folder this user can write")
        return path
    host = re.sub(r"[^A-Za-z0-9._-]", "_", str(fp.get("hostname") or "host"))[:60]
    return f"doctor-{host}-{dt.datetime.now(dt.timezone.utc).strftime('%Y%m%dT%H%M%SZ')}.json"


@app.command(help=DOCTOR_HELP)
def doctor(db: Optional[str] = DbOption,
           device: Optional[str] = typer.Option(None, "--device", "-d", metavar="DEVICE",
                                                help="cpu, cuda (every GPU: the default where there is one) or cuda:N"),
           level: str = typer.Option("quick", "--level", metavar="LEVEL",
                                     help="quick (about a minute per GPU) or burn-in (quick, then --minutes of load)"),
           minutes: Optional[float] = typer.Option(None, "--minutes", metavar="N",
                                                   help="burn-in length in minutes (burn-in only; default 10)"),
           bundle: Optional[str] = typer.Option(None, "--bundle", "-o", metavar="PATH",
                                                help="evidence bundle to write (default doctor-HOST-TIME.json here)"),
           allow_busy: bool = typer.Option(False, "--allow-busy", help="run even if another process uses a GPU"),
           quiet: bool = typer.Option(False, "--quiet", "-q", help="no line per check while it runs"),
           fmt: str = FMT) -> None:
    import torch

    from gpuarena.analysis.verbs import doctor as D
    from gpuarena.report.text.doctor import render as render_doctor
    from gpuarena.runner.guard import check_device, check_environment, default_device
    from gpuarena.measure.busy import busy_message
    from gpuarena.measure.env import fingerprint, fingerprint_hash
    from gpuarena.store import bundle as B

    check_format(fmt, ("table", "md", "json"))
    minutes = _levels(level, minutes)
    check_environment()
    device = check_device(device or default_device())
    path = _bundle_path(bundle, {"hostname": socket.gethostname()})
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
    run_ids, evidence = _doctor_checks(store, devices, n if device == "cuda" else 0, env_id, fp, console, quiet,
                                       level, minutes)
    verdicts = D.verdicts(store.results(run_ids), store.results(status="ok"), fp, store.environment, evidence)
    out = B.export(store, run_ids)
    out["doctor"] = {"level": level, "minutes": minutes, "devices": devices, "acceptance": evidence}
    out["sha256"] = B.content_hash(out)
    B.write(out, path, protect=(store.path,))
    typer.echo(render_doctor(verdicts, fmt), nl=False)
    if fmt != "json":
        console.print(f"stored as run(s) {', '.join(run_ids)} in {escape(store.path)}; "
                      f"evidence bundle {escape(path)} (sha256 {out['sha256'][:16]}...)")
    raise typer.Exit(D.exit_code(verdicts))


ENV_IDS = 10**9   # more than any one bundle's environment ids


def _bundle_groups(bundles: list[str]) -> tuple[list, dict, list[dict]]:
    """(results, fingerprints by env id, one group per bundle and environment): env ids made unique
    across bundles; a bundle's doctor evidence goes with it where it has one environment."""
    from gpuarena.store import bundle as B

    results, envs, groups = [], {}, []
    for i, path in enumerate(bundles):
        b = B.read(path)               # validated whole; a bad bundle is one line, exit 2
        for e in b.environments:
            envs[i * ENV_IDS + e.id] = e.fingerprint
        mine = [r.replaced(env_id=i * ENV_IDS + r.env_id) if r.env_id is not None else r for r in b.results]
        results += mine
        acceptance = (b.doctor or {}).get("acceptance") if len(b.environments) <= 1 else None
        for eid in dict.fromkeys(r.env_id for r in mine):
            groups.append({"results": [r for r in mine if r.env_id == eid], "fp": envs.get(eid),
                           "acceptance": acceptance, "label": path})
    return results, envs, groups


@app.command()
def fleet(bundles: list[str] = typer.Argument(None, metavar="BUNDLE", hidden=True),
          db: Optional[str] = DbOption,
          run: list[str] = typer.Option([], "--run", metavar="RUN_ID",
                                        help="only these runs of the database (repeatable)"),
          suite: Optional[str] = typer.Option(None, "--suite", "-s", metavar="SUITE",
                                              help="only the database's runs of this suite (e.g. doctor)"),
          show_all: bool = typer.Option(False, "--all", help="every GPU and link, not only the outliers"),
          fmt: str = FMT) -> None:
    """Many hosts' runs of one suite, from BUNDLEs (`gpuarena doctor` or `gpuarena export` on each host) or
    one database: each GPU and link against its expected figure and the fleet median (MAD), doctor's
    acceptance evidence judged again; the slow or wrong GPUs and links named.  Exit code 0: none named;
    1: a GPU or link named; 2: a usage error."""
    from gpuarena.analysis.verbs import doctor as D
    from gpuarena.analysis.verbs import fleet as F
    from gpuarena.report.text.fleet import render as render_fleet

    check_format(fmt, ("table", "md", "json"))
    groups: list[dict] = []
    if bundles:
        if db or run or suite:
            raise UserError("give bundles or a database (--db, --run, --suite), not both")
        results, envs, groups = _bundle_groups(bundles)
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
        for eid in dict.fromkeys(r.env_id for r in results):
            groups.append({"results": [r for r in results if r.env_id == eid],
                           "fp": lookup(eid) if eid is not None else None, "label": f"env {eid}"})
    if not [r for r in results if r.status == "ok"]:
        raise UserError("no ok results to compare")
    analysis = F.analyse(results, lookup)
    per_host = D.hosts(groups, results, lookup)
    analysis = D.FleetVerdicts(**dict(analysis), hosts_verdicts=per_host, named=D.named(analysis, per_host))
    typer.echo(render_fleet(analysis, fmt, show_all), nl=False)
    raise typer.Exit(analysis.named.exit_code)
