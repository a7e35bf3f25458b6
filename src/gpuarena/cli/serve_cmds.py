"""Verbs of served endpoints: `gpuarena serve-tiny`, a small OpenAI-compatible server to point
endpoint-serve at (workloads/endpoint/tiny_server.py), and `gpuarena engines`, the served engines
side by side (analysis/verbs/endpoints.py)."""

from __future__ import annotations

import errno
import os
from typing import Optional

import typer

from gpuarena.cli.common import DbOption, check_format, open_store
from gpuarena.errors import UserError, brief

app = typer.Typer()   # this module's verbs; cli/app.py puts them on the root, at the top level


@app.command("serve-tiny")
def serve_tiny(
    host: str = typer.Option("127.0.0.1", "--host", metavar="HOST", help="address to listen on"),
    port: int = typer.Option(8000, "--port", metavar="PORT", help="port (0: any free one, printed)"),
    shape: str = typer.Option("tiny", "--shape", metavar="SHAPE", help="decoder shape (llm/shapes.py SHAPES)"),
    api_key_env: Optional[str] = typer.Option(None, "--api-key-env", metavar="NAME",
                                              help="require the key held by this environment variable"),
    threads: int = typer.Option(1, "--threads", metavar="N", help="CPU threads for the model"),
    record: Optional[str] = typer.Option(None, "--record", metavar="FILE",
                                         help="append each request received to this JSONL file (time, prompt, "
                                              "roles, prompt tokens, max_tokens)"),
) -> None:
    """Serve the project's Llama-style decoder (random weights) over the OpenAI API, streamed."""
    import asyncio

    from gpuarena.workloads.endpoint import tiny_server
    from gpuarena.workloads.llm.shapes import SHAPES

    if not 0 <= port <= 65535:
        raise UserError(f"--port {port}: must be between 0 and 65535")
    if shape not in SHAPES:
        raise UserError(f"--shape: no shape {brief(shape)}; known shapes are {', '.join(SHAPES)}")
    if not 1 <= threads <= 1024:
        raise UserError(f"--threads {threads}: must be between 1 and 1024")
    _check_fits(shape, SHAPES[shape])
    key = None
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise UserError(f"--api-key-env {api_key_env}: that environment variable is not set")
    log = _append_log(record) if record else None
    try:
        asyncio.run(tiny_server.serve(host, port, shape, key, threads, log))
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    except KeyboardInterrupt:
        pass
    finally:
        if log:
            log.close()


@app.command()
def engines(prices: Optional[str] = typer.Option(None, "--prices", metavar="FILE",
                                                 help="YAML file of price overrides (see data/article_prices.yaml)"),
            db: Optional[str] = DbOption,
            fmt: str = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, md or json")) -> None:
    """Served engines side by side (endpoint-serve results, like for like): tok/s, goodput, latency, $/M tokens;
    gpuarena's own llm-serve at the same lengths beside them."""
    from gpuarena.analysis.verbs import endpoints
    from gpuarena.report.text.endpoints import render
    from gpuarena.data.catalog import load_prices

    from gpuarena.analysis.verbs import frontier

    check_format(fmt, ("table", "md", "json"))
    store = open_store(db, readonly=True)
    rows, own = endpoints.table(store, load_prices(prices))
    curves = frontier.curves(store.results(status="ok"))
    typer.echo(render(rows, fmt, own, curves), nl=False)


def _check_fits(shape: str, cfg) -> None:
    """serve-tiny builds its decoder in FP32 on the CPU: a shape whose weights exceed the memory
    available is one line before anything is allocated, not an internal error mid-build."""
    import psutil

    from gpuarena.workloads.llm.flops import param_counts

    need = param_counts(cfg)[0] * 4
    have = psutil.virtual_memory().available
    if need > have:
        raise UserError(f"--shape {shape}: its FP32 weights need {need / 2**30:,.1f} GiB and this machine has "
                        f"{have / 2**30:,.1f} GiB available; serve-tiny runs on the CPU: pick a smaller shape")


def _append_log(path: str):
    """--record's file, opened to append: a regular file only, checked on the opened descriptor (a FIFO
    without a reader would block the server's start, a device would take every line), never a hang."""
    import stat

    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0), 0o666)
    except OSError as exc:
        why = "not a regular file (a FIFO)" if exc.errno == errno.ENXIO else exc.strerror or exc.__class__.__name__
        raise UserError(f"--record {path}: {why}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UserError(f"--record {path}: not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "a", encoding="utf-8")
