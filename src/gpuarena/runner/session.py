"""A run session: what `gpuarena run` does between parsing its options and printing the
results.  In order:

1. ``prepare``: the torchrun pass-through options and the GPUARENA_* variables checked;
2. a plan (runner/plan.py): the suite expanded, or the missing cases of a resumed run;
3. ``open_session``: the busy guard, the environment fingerprint with what the servers a
   plan drives say about themselves, every case checked storable (what could not be stored
   is never measured), the database opened only now (a refused command leaves none behind),
   the run created and claimed;
4. ``run``: the executor, each result stored as its case ends; on Ctrl-C, SIGTERM or SIGHUP,
   a failing disk, a store locked or silent past its timeout (the measured case kept as a pending
   file) or anything else the run is released as interrupted (resumable) and the
   exception goes on to the caller; the run marked complete when every case is stored.

The caller (the CLI) says what happens through callbacks and prints; nothing here prints.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from gpuarena.errors import UserError
from gpuarena.runner.guard import busy_guard, check_environment, release, server_environment
from gpuarena.runner.plan import Plan

if TYPE_CHECKING:
    from gpuarena.store.result import Result


@dataclass
class Session:
    plan: Plan
    store: object
    run_id: str
    env_id: int | None
    device_name: str
    warnings: list[str]


@dataclass
class Finished:
    outcomes: list
    stored: list[Result]        # the run's results as the store reads them back
    elsewhere_only: bool        # every case of this node is stored by node 0 (multi-node)


def prepare(torchrun_args: list[str]) -> None:
    """What every case reads from this process's environment, checked before any run is written."""
    from gpuarena.runner.torchrun import export_args

    export_args(torchrun_args)
    check_environment()


def open_session(plan: Plan, allow_busy: bool, store_or_opener) -> Session:
    """The run written and claimed, ready to measure.  ``store_or_opener``: the open store (a
    resume) or a function that opens it, called once every check has passed."""
    from gpuarena.measure.env import device_name, fingerprint, fingerprint_hash
    from gpuarena.runner.executor import check_storable, clean_stale_workdirs

    busy = busy_guard(plan.device, plan.todo, allow_busy)
    fp = fingerprint()
    dname = device_name(fp, plan.device)
    check_storable(plan.todo, plan.run_id or "new", dname)   # what could not be stored is never measured
    store = store_or_opener() if callable(store_or_opener) else store_or_opener
    clean_stale_workdirs()  # case folders of runners killed before they could clean up
    servers = server_environment(plan.todo)
    if servers:
        fp["servers"] = servers
    env_id = store.env_id(fp, fingerprint_hash(fp))
    run_id = plan.run_id
    if run_id is None:
        run_id = store.create_run(plan.suite_name, plan.device, [c.model_dump() for c in plan.cases], env_id,
                                  argv=sys.argv[1:])
        store.claim_run(run_id)
    return Session(plan, store, run_id, env_id, dname, [busy] if busy else [])


def _raise_interrupt(signum, frame):
    from gpuarena.store import pg_connection

    if pg_connection.interrupt():   # a statement waits on the server: it ends now and raises KeyboardInterrupt
        return
    raise KeyboardInterrupt


def end_like_ctrl_c() -> None:
    """A pre-empted job gets SIGTERM, a closed terminal SIGHUP: end like Ctrl-C (the case's
    process group is killed, the run marked interrupted) rather than dying with the child orphaned."""
    try:
        signal.signal(signal.SIGTERM, _raise_interrupt)
        signal.signal(signal.SIGHUP, _raise_interrupt)
        signal.signal(signal.SIGINT, _raise_interrupt)
    except ValueError:  # not the main thread (run called from a library): leave signals alone
        pass


def run(s: Session, on_start: Callable | None = None, on_done: Callable | None = None) -> Finished:
    """Measure the plan's cases, each stored as it ends; the run released whatever happens."""
    from gpuarena.runner.executor import StoreFailed, execute
    from gpuarena.runner.torchrun import ELSEWHERE

    end_like_ctrl_c()
    try:
        outcomes = execute(s.store, s.run_id, s.plan.todo, s.env_id, s.device_name, on_start, on_done)
    except StoreFailed as exc:
        release(s.store, s.run_id, "interrupted")
        raise UserError(str(exc)) from None
    except BaseException:  # Ctrl-C and anything else end the run too: never left 'running'
        release(s.store, s.run_id, "interrupted")
        raise
    elsewhere = {o.case.key for o in outcomes if o.result.get("status") == ELSEWHERE}   # node 0 stores them
    missing = {c.key for c in s.plan.cases} - s.store.done_keys(s.run_id) - elsewhere
    s.store.release_run(s.run_id, "complete" if not missing else "interrupted")
    stored = s.store.results([s.run_id])
    return Finished(outcomes, stored, not stored and bool(elsewhere))
