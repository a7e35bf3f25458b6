"""Verbs: whatif, advise (the models' predictions: a workload's scaling over N GPUs, a large model's
training plan, and which GPU to buy)."""

from __future__ import annotations

from typing import Optional

import typer

from gpuarena.cli.common import (BASIS, FMT, PRICES, WORKLOAD, DbOption, check_format, gpu_counts, open_store,
                                 optional_store, out, refuse_ignored)
from gpuarena.errors import UserError
from gpuarena.safeio import finite
from gpuarena.store.result import MAX_THROUGHPUT
from gpuarena.analysis.physics import models

app = typer.Typer()   # this module's verbs; cli/app.py puts them on the root, at the top level


@app.command()
def whatif(workload: str = typer.Option(..., "--workload", "-w", metavar="WORKLOAD",
                                        help="workload name (see `gpuarena list`)"),
           gpu: str = typer.Option(..., "--gpu", metavar="GPU", help="GPU name, loosely (see `gpuarena gpus`)"),
           n: str = typer.Option("2,4,8", "--n", metavar="N,N,...", help="GPU counts, e.g. 4,8"),
           busbw: Optional[float] = typer.Option(None, "--busbw", metavar="GB_PER_S",
                                                 help="all-reduce bus bandwidth GB/s"),
           overlap: Optional[float] = typer.Option(None, "--overlap", metavar="SHARE",
                                                   help="share of communication hidden, 0-1"),
           batch_size: Optional[int] = typer.Option(None, "--batch-size", metavar="N", help="per-GPU batch size"),
           throughput: Optional[float] = typer.Option(None, "--throughput", metavar="ITEMS_PER_S",
                                                      help="single-GPU items/s if none stored"),
           model: Optional[str] = typer.Option(None, "--model", metavar="MODEL",
                                               help="ddp-train: resnet50 or bert-large"),
           variant: Optional[str] = typer.Option(None, "--variant", metavar="VARIANT",
                                                 help="ddp-train variant (default seed)"),
           bucket_mb: Optional[float] = typer.Option(None, "--bucket-mb", metavar="MIB",
                                                     help="DDP bucket size in MiB (its all-reduce message; "
                                                          "default 25)"),
           tokens: Optional[float] = typer.Option(None, "--tokens", metavar="TOKENS",
                                                  help="llm-train: training tokens, e.g. 300e9"),
           mfu: Optional[str] = typer.Option(None, "--mfu", metavar="SHARE",
                                             help="llm-train: share of peak, or 'measured' (default: from published "
                                                  "and stored runs)"),
           seq_len: Optional[int] = typer.Option(None, "--seq-len", metavar="TOKENS",
                                                 help="llm-train: tokens per sequence (default: the model's "
                                                      "context)"),
           db: Optional[str] = DbOption, fmt: str = FMT) -> None:
    """Predicted data-parallel scaling: compute + exposed ring all-reduce.
    `-w llm-train`: memory per GPU and training time of a large model (analysis/physics/llm_plan.py)."""
    from gpuarena.analysis.physics import whatif as W
    from gpuarena.report.text.whatif import render

    check_format(fmt, ("table", "md", "json"))
    finite(throughput, "--throughput", cap=MAX_THROUGHPUT)
    finite(busbw, "--busbw", cap=1e6)
    finite(bucket_mb, "--bucket-mb", cap=1e6)
    if overlap is not None and not (finite(overlap, "--overlap", positive=False, cap=1) >= 0):
        raise UserError(f"--overlap {overlap}: must be between 0 and 1")
    if batch_size is not None and not 1 <= batch_size <= 1_000_000:
        raise UserError(f"--batch-size {batch_size}: must be between 1 and 1000000")
    store = optional_store(db, named_must_exist=False)   # a what-if needs no measurements
    plan = models.of(workload).plan     # the physics says which model plans (analysis/physics/models.py PLANS)
    if plan == "serving":
        raise UserError(f"whatif -w {workload}: serving on N GPUs is tensor parallel, modelled by "
                        "`gpuarena advise -w llm-serve --gpus N` (and `check -w llm-serve --gpus N`)")
    if plan == "training":    # the training plan (cli/llm_cmds.py)
        from gpuarena.cli.llm_cmds import whatif_llm
        out(whatif_llm(model, tokens, gpu, gpu_counts(n), mfu, variant, store, fmt, seq_len, busbw, unused={
            "--overlap": overlap, "--batch-size": batch_size, "--throughput": throughput, "--bucket-mb": bucket_mb}))
        return
    refuse_ignored(f"whatif -w {workload}", {"--tokens": tokens is not None, "--mfu": mfu is not None,
                                             "--seq-len": seq_len is not None})
    out(render(W.predict(workload, gpu, gpu_counts(n), store, busbw, overlap, batch_size, throughput, model,
                              variant, 25.0 if bucket_mb is None else bucket_mb), fmt))


@app.command()
def advise(workload: Optional[str] = WORKLOAD,
           gpus: int = typer.Option(1, "--gpus", metavar="N"),
           budget: Optional[float] = typer.Option(None, "--budget", metavar="DOLLARS",
                                                  help="$ for purchase (or cloud with --hours)"),
           hours: Optional[float] = typer.Option(None, "--hours", help="hours of cloud use to price", metavar="HOURS"),
           min_memory: Optional[float] = typer.Option(None, "--min-memory", help="GB per GPU at least", metavar="GB"),
           precision: Optional[str] = typer.Option(None, "--precision", metavar="PRECISION",
                                                   help="rank only this precision class"),
           validate: bool = typer.Option(False, "--validate", help="leave-one-GPU-out check of the projection model "
                                         "against the published cross-GPU figures"),
           sets: list[str] = typer.Option([], "--set", help="llm-serve: context=, prompt=, output=, shape=, "
                                          "hf_config=, precision=, batch=, overhead=; llm-train: shape=, tokens=, "
                                          "seq_len=, mfu=, busbw=", metavar="KEY=VALUE"),
           include_consumer: bool = typer.Option(False, "--include-consumer",
                                                 help="rank consumer (GeForce) cards beside data-centre ones"),
           basis: str = BASIS,
           prices: Optional[str] = PRICES, db: Optional[str] = DbOption, fmt: str = FMT) -> None:
    """Rank the catalog's GPUs for a workload, like with like (measured, published or projected)."""
    from gpuarena.analysis.verbs import advise as A
    from gpuarena.report.text.advise import render
    from gpuarena.data.catalog import load_prices

    check_format(fmt, ("table", "md", "json"))
    finite(budget, "--budget")
    finite(hours, "--hours")
    finite(min_memory, "--min-memory", cap=1e6)
    if validate:
        from gpuarena.analysis.verbs import projection_check as J
        from gpuarena.report.text.projection import render_validation

        refuse_ignored("advise --validate (it checks the projection model on the catalog)", {
            "--workload": workload is not None, "--gpus": gpus != 1, "--set": bool(sets),
            "--prices": prices is not None, "--budget": budget is not None, "--hours": hours is not None,
            "--min-memory": min_memory is not None, "--precision": precision is not None,
            "--include-consumer": include_consumer})
        out(render_validation(J.validate(), fmt))
        return
    if not workload:
        raise UserError("advise needs --workload (or --validate)")
    plan = models.of(workload).plan     # the physics says which model plans (analysis/physics/models.py PLANS)
    if plan != "catalog":
        from gpuarena.cli import llm_cmds   # the serving model (what fits, TTFT, tokens/s), or one training plan

        llm = {"serving": llm_cmds.advise_serving, "training": llm_cmds.advise_training}[plan]
        out(llm(sets, gpus, min_memory, precision, budget, hours, prices, db, fmt, include_consumer, basis))
        return
    if sets:
        raise UserError("--set is for advise -w llm-serve and llm-train")
    over = load_prices(prices)
    from gpuarena.data.prices import BASES

    if basis not in BASES:
        raise UserError(f"--price-basis {basis!r}: choose one of {', '.join(BASES)}")
    out(render(A.advise(open_store(db, readonly=True), workload, gpus, budget, hours, min_memory, over,
                          precision, include_consumer, basis), fmt))
