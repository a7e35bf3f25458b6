"""Verbs: export, import (bundles of results that move between machines)."""

from __future__ import annotations

from typing import Optional

import typer

from gpuarena.cli.common import DbOption, open_store, resolve_run_ids, undeclared_warning
from gpuarena.errors import UserError
from gpuarena.safeio import printable

app = typer.Typer()   # this module's verbs; cli/app.py puts them on the root, at the top level


@app.command()
def export(run: list[str] = typer.Option([], "--run", metavar="RUN_ID",
                                         help="run id (repeatable; 'latest' for the newest; default: all "
                                              "measured/imported)"),
           output: str = typer.Option(..., "--output", "-o", metavar="FILE", help="bundle file to write"),
           db: Optional[str] = DbOption) -> None:
    """Write results and their environments to a versioned JSON bundle."""
    from gpuarena.store import bundle as B

    store = open_store(db, readonly=True)
    b = B.export(store, resolve_run_ids(store, run))
    if not b["results"]:
        raise UserError("no measured or imported results to export")
    B.write(b, output, protect=(store.path,))
    typer.echo(f"exported {len(b['results'])} result(s), {len(b['environments'])} environment(s) to {output}")


def _param_map(workload: str):
    from gpuarena.workloads import registry

    return registry.get(workload).param_map() if workload in registry.names() else None


@app.command("import")
def import_(file: Optional[str] = typer.Argument(None, metavar="BUNDLE", hidden=True),
            published: bool = typer.Option(False, "--published", help="load the shipped published results"),
            gpu: str = typer.Option("unknown GPU", "--gpu", metavar="NAME",
                                    help="the GPU a serving tool's result file was measured on (the file does "
                                         "not say)"),
            db: Optional[str] = DbOption) -> None:
    """Import BUNDLE, a file written by `gpuarena export` (validated whole, one
    transaction), a serving benchmark's result file (vllm bench serve, SGLang, LLMPerf,
    AIPerf, GenAI-Perf, guidellm, MLPerf loadgen; recognised by content, its figures
    recomputed from its per-request records where it has them), or the shipped
    published results (--published)."""
    if bool(file) == published:
        raise UserError("give a bundle file or --published (one of them)")
    if published:
        from gpuarena.analysis.rows.published import load_into

        n = load_into(open_store(db))
        typer.echo(f"loaded {n} published result(s) (source=published); earlier published rows replaced")
        return
    from gpuarena.store import bundle as B
    from gpuarena.workloads.endpoint import importers

    found = importers.read(file)
    if found is not None:           # a serving tool's result file (one result per run it holds)
        parsed, results = importers.results(found, file, printable(gpu)[:200])
        out = B.import_bundle(open_store(db), file, B.from_results(results, file))
        typer.echo(f"imported {out['imported']} result(s) of {parsed[0].tool} into run {out['run_id']} "
                   f"({results[0]['extra']['imported_from']['figures']}); {out['skipped_duplicates']} already present")
        for r in results:
            for line in r["extra"]["tool_differences"]:
                typer.echo(f"  differs from the tool's summary: {line}")
            for line in r["extra"]["tool_not_comparable"]:
                typer.echo(f"  not gpuarena's definition: {line}")
            for line in r["extra"]["tool_notes"]:
                typer.echo(f"  note: {line}")
        return
    bundle = B.read(file)           # validate before opening (or creating) the database
    B.check_params(bundle, file, _param_map)
    out = B.import_bundle(open_store(db), file, bundle)
    if out["run_id"] is None:
        typer.echo(f"imported 0 result(s); {out['skipped_duplicates']} already present (nothing new, no run made)")
    else:
        typer.echo(f"imported {out['imported']} result(s) into run {out['run_id']}; "
                   f"{out['skipped_duplicates']} already present")
    note = undeclared_warning([(r.id, r.workload, r.undeclared) for r in bundle.results if r.undeclared])
    if note:
        typer.echo(f"gpuarena: warning: {printable(note)}", err=True)
