"""Verbs: compare, cost, check, whatif, advise (export and import: bundle_cmds.py).

Published results are not loaded behind the user's back: `gpuarena import
--published` puts them in the database (source='published'), and from then on
compare, cost, check and advise use them beside measured rows, labelled.
"""

from __future__ import annotations

from typing import Optional

import typer

from gpuarena.cli import app
from gpuarena.cli.claim_input import check_claim_input, claims_of
from gpuarena.cli.common import DbOption, check_format, gpu_counts, open_store, refuse_ignored
from gpuarena.errors import UserError
from gpuarena.safeio import finite
from gpuarena.store.result import MAX_THROUGHPUT

FMT = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, md or json")
PRICES = typer.Option(None, "--prices", metavar="FILE", help="YAML file of price overrides (see data/article_prices.yaml)")
BASIS = typer.Option("cloud", "--price-basis", metavar="BASIS",
                     help="cloud ($ per GPU-hour, on-demand; default) or purchase ($ per GPU): one market per table")


def _optional_store(db: str | None, named_must_exist: bool = True):
    """The database if there is one: a --db the user named must exist (check: a typo must not
    silently judge claims without the measurements); the default may be absent."""
    from gpuarena.store.db import default_path, exists

    if db and named_must_exist and not exists(db):
        raise UserError(f"--db {db}: the file does not exist")
    path = db or default_path()
    return open_store(path, readonly=True) if exists(path) else None


def _out(text: str) -> None:
    typer.echo(text, nl=False)


@app.command()
def compare(baseline: str = typer.Option(..., "--baseline", "-b", metavar="GPU", help="baseline GPU, loosely named"),
            workload: Optional[str] = typer.Option(None, "--workload", "-w", metavar="WORKLOAD", help="workload name (see `gpuarena list`)"),
            db: Optional[str] = DbOption, fmt: str = FMT) -> None:
    """Each GPU against a baseline: ratios, 95% CIs from the raw repeats, verdicts, geometric mean."""
    from gpuarena.analysis.verbs import compare as C
    from gpuarena.report.text.compare import render

    check_format(fmt, ("table", "md", "json"))
    _out(render(C.compare(open_store(db, readonly=True), baseline, workload), fmt))


@app.command()
def cost(workload: Optional[str] = typer.Option(None, "--workload", "-w", metavar="WORKLOAD", help="workload name (see `gpuarena list`)"),
         years: float = typer.Option(3.0, "--years", metavar="YEARS", help="TCO horizon in years"),
         gpus: int = typer.Option(1, "--gpus", metavar="N", help="fleet size for TCO"),
         kwh_price: Optional[float] = typer.Option(None, "--kwh-price", metavar="USD", help="purchase basis: $ per kWh (default 0.12, an assumption)"),
         pue: Optional[float] = typer.Option(None, "--pue", metavar="RATIO", help="purchase basis: data-centre power usage effectiveness (default 1.5)"),
         hosting: Optional[float] = typer.Option(None, "--hosting-per-gpu-year", metavar="USD", help="purchase basis: $ per GPU-year for hosting (default 0)"),
         baseline: Optional[str] = typer.Option(None, "--baseline", "-b", metavar="GPU", help="GPU for relative perf/price"),
         basis: str = BASIS, prices: Optional[str] = PRICES, db: Optional[str] = DbOption, fmt: str = FMT) -> None:
    """Throughput per dollar on one price basis (cloud $/GPU-hour or purchase $), items per joule, fleet rent or TCO."""
    from gpuarena.analysis.verbs import cost as C
    from gpuarena.report.text.cost import render
    from gpuarena.data.catalog import load_prices
    from gpuarena.data.prices import check_basis

    check_format(fmt, ("table", "md", "json"))
    check_basis(basis)
    given = [n for n, v in (("--kwh-price", kwh_price), ("--pue", pue), ("--hosting-per-gpu-year", hosting))
             if v is not None]
    if basis == "cloud" and given:
        raise UserError(f"{', '.join(given)}: for --price-basis purchase (TCO); a cloud price includes power and hosting")
    kwh = C.DEFAULT_KWH_PRICE if kwh_price is None else kwh_price
    pue = C.DEFAULT_PUE if pue is None else pue
    hosting = C.DEFAULT_HOSTING if hosting is None else hosting
    C.check_inputs(years, gpus, kwh, pue, hosting)
    over = load_prices(prices)
    _out(render(C.cost_table(open_store(db, readonly=True), workload, years, gpus, kwh, pue, hosting,
                               over, baseline, basis=basis), fmt))


@app.command()
def check(gpu: Optional[str] = typer.Option(None, "--gpu", metavar="GPU", help="GPU the claim is about (see `gpuarena gpus`)"), workload: Optional[str] = typer.Option(None, "--workload", "-w", metavar="WORKLOAD", help="workload name (see `gpuarena list`)"),
          precision: Optional[str] = typer.Option(None, "--precision",
                                                  help="default/fp32 (PyTorch defaults), fp32-ieee, tf32, bf16, fp16, fp8; "
                                                  "llm-serve: the weights' bf16, fp16, fp8, int8, int4", metavar="PRECISION"),
          batch_size: Optional[int] = typer.Option(None, "--batch-size", metavar="N", help="items per step of the claim"),
          throughput: Optional[float] = typer.Option(None, "--throughput", help="claimed items/s (all GPUs together); matmul: TFLOP/s; membw, h2d, d2h: GB/s; allreduce: bus bandwidth GB/s", metavar="ITEMS_PER_S"),
          latency: Optional[float] = typer.Option(None, "--latency", help="claimed seconds per item", metavar="SECONDS"),
          seq_len: Optional[int] = typer.Option(None, "--seq-len", metavar="TOKENS", help="tokens per sequence (BERT, LLM)"),
          image_size: Optional[int] = typer.Option(None, "--image-size", metavar="PIXELS", help="image height and width in pixels"),
          steps: Optional[int] = typer.Option(None, "--steps", help="diffusion steps", metavar="N"),
          gpus: Optional[int] = typer.Option(None, "--gpus", help="GPU count of a multi-GPU throughput or scaling claim", metavar="N"),
          scaling: Optional[float] = typer.Option(None, "--scaling", help="claimed scaling coefficient at --gpus", metavar="COEFF"),
          replicas: Optional[int] = typer.Option(None, "--replicas", metavar="R", help="llm-serve: --gpus as R "
                                                 "independent copies, each TP over gpus/R (default: one TP copy)"),
          ttft: Optional[float] = typer.Option(None, "--ttft", metavar="SECONDS", help="llm-serve: claimed time to "
                                               "the first token of --set prompt_len= tokens"),
          vs: Optional[str] = typer.Option(None, "--vs", help="second GPU of a ratio claim", metavar="GPU"),
          ratio: Optional[str] = typer.Option(None, "--ratio", help="claimed throughput of --gpu / --vs; with --gpus, "
                                              "the claimed time ratio or range (1.4-1.6 = 40-60% longer)", metavar="RATIO"),
          what: str = typer.Option("allreduce", "--what", help="with --vs and --gpus: allreduce or step time", metavar="WHAT"),
          csv_path: Optional[str] = typer.Option(None, "--csv", help="CSV with gpu,workload,precision,batch_size,"
                                                 "throughput|latency|scaling[,seq_len,image_size,steps,gpus,source]", metavar="FILE"),
          sets: list[str] = typer.Option([], "--set", metavar="KEY=VALUE",
                                         help="llm-serve: shape=, hf_config=, prompt_len=, new_tokens=; "
                                         "llm-train: shape=, hf_config="),
          db: Optional[str] = DbOption, fmt: str = FMT) -> None:
    """Is a published figure physically possible, judged as stated, at the precision it executed as?
    `-w llm-train` alone: article 001's 175B claims against the memory and time model."""
    from gpuarena.analysis.physics import models
    from gpuarena.analysis.verbs import check as C
    from gpuarena.report.text.check import render

    check_format(fmt, ("table", "md", "json"))
    if models.DECODER_TRAINING.judges(workload) and all(x is None for x in (gpu, precision, batch_size, throughput, csv_path)):
        _out(_article_001_claims(fmt, {
            "--vs": vs is not None, "--ratio": ratio is not None, "--latency": latency is not None,
            "--seq-len": seq_len is not None, "--image-size": image_size is not None, "--steps": steps is not None,
            "--gpus": gpus is not None, "--scaling": scaling is not None, "--what": what != "allreduce"}))
        return
    serving = models.SERVING.judges(workload)
    if not serving and (replicas is not None or ttft is not None):
        raise UserError("--replicas and --ttft are for llm-serve claims (-w llm-serve)")
    store = _optional_store(db)
    if serving and (vs is not None or ratio is not None):
        from gpuarena.cli.llm_cmds import check_serving_ratio_cli
        _out(check_serving_ratio_cli(gpu, vs, ratio, workload, precision, batch_size, gpus, replicas, sets, store,
                                     fmt, {"--throughput": throughput, "--latency": latency, "--ttft": ttft}))
        return
    if vs is not None or ratio is not None:
        _out(_check_ratio(gpu, vs, ratio, workload, precision, batch_size, gpus, what, throughput, store, fmt))
        return
    one = {"gpu": gpu, "workload": workload, "precision": precision, "batch_size": batch_size,
           "throughput": throughput, "latency": latency, "seq_len": seq_len, "image_size": image_size,
           "steps": steps, "gpus": gpus, "scaling": scaling, "replicas": replicas, "ttft": ttft}
    claims = claims_of(one, csv_path)
    if sets:
        from gpuarena.cli.llm_cmds import llm_claim_sets
        claims = [{**c, **llm_claim_sets(sets, c.get("workload"))} for c in claims]
    for c in claims:
        check_claim_input(c)
    _out(render(C.check_claims(claims, store), fmt))


def _article_001_claims(fmt: str, given: dict[str, bool]) -> str:
    """check -w llm-train alone: article 001's 175B claims against the memory and time model."""
    from gpuarena.analysis.physics import llm_claims
    from gpuarena.report.text.llm_claims import render

    refuse_ignored("check -w llm-train (article 001's claims)", given)
    return render(llm_claims.judge(), fmt)


def _check_ratio(gpu, vs, ratio, workload, precision, batch_size, gpus, what, throughput, store, fmt: str) -> str:
    """A ratio claim (--vs, --ratio): one GPU against another, alone or over --gpus."""
    from gpuarena.analysis.physics import ratio as RT
    from gpuarena.report.text.ratio import render

    if vs is None or ratio is None or gpu is None or workload is None:
        raise UserError("a ratio claim needs --gpu, --vs, --ratio and --workload")
    lo, hi = RT.parse_range(ratio)
    if gpus and gpus > 1:
        if what not in ("allreduce", "step"):
            raise UserError(f"--what {what!r}: allreduce or step")
        row = RT.check_multi_gpu_ratio(workload, gpu, vs, gpus, lo, hi, what, throughput, batch_size, store)
    else:
        row = RT.check_ratio(workload, gpu, vs, lo, precision or "default", store, hi)
    return render([row], fmt)


@app.command()
def whatif(workload: str = typer.Option(..., "--workload", "-w", metavar="WORKLOAD", help="workload name (see `gpuarena list`)"), gpu: str = typer.Option(..., "--gpu", metavar="GPU", help="GPU name, loosely (see `gpuarena gpus`)"),
           n: str = typer.Option("2,4,8", "--n", metavar="N,N,...", help="GPU counts, e.g. 4,8"),
           busbw: Optional[float] = typer.Option(None, "--busbw", metavar="GB_PER_S", help="all-reduce bus bandwidth GB/s"),
           overlap: Optional[float] = typer.Option(None, "--overlap", metavar="SHARE", help="share of communication hidden, 0-1"),
           batch_size: Optional[int] = typer.Option(None, "--batch-size", metavar="N", help="per-GPU batch size"),
           throughput: Optional[float] = typer.Option(None, "--throughput", metavar="ITEMS_PER_S", help="single-GPU items/s if none stored"),
           model: Optional[str] = typer.Option(None, "--model", metavar="MODEL", help="ddp-train: resnet50 or bert-large"),
           variant: Optional[str] = typer.Option(None, "--variant", metavar="VARIANT", help="ddp-train variant (default seed)"),
           bucket_mb: Optional[float] = typer.Option(None, "--bucket-mb", metavar="MIB", help="DDP bucket size in MiB (its all-reduce message; default 25)"),
           tokens: Optional[float] = typer.Option(None, "--tokens", metavar="TOKENS", help="llm-train: training tokens, e.g. 300e9"),
           mfu: Optional[str] = typer.Option(None, "--mfu", metavar="SHARE", help="llm-train: share of peak, or 'measured' (default: from published and stored runs)"),
           seq_len: Optional[int] = typer.Option(None, "--seq-len", metavar="TOKENS", help="llm-train: tokens per sequence (default: the model's context)"),
           db: Optional[str] = DbOption, fmt: str = FMT) -> None:
    """Predicted data-parallel scaling: compute + exposed ring all-reduce.
    `-w llm-train`: memory per GPU and training time of a large model (analysis/physics/llm_plan.py)."""
    from gpuarena.analysis.physics import models, whatif as W
    from gpuarena.report.text.whatif import render

    check_format(fmt, ("table", "md", "json"))
    finite(throughput, "--throughput", cap=MAX_THROUGHPUT)
    finite(busbw, "--busbw", cap=1e6)
    finite(bucket_mb, "--bucket-mb", cap=1e6)
    if overlap is not None and not (finite(overlap, "--overlap", positive=False, cap=1) >= 0):
        raise UserError(f"--overlap {overlap}: must be between 0 and 1")
    if batch_size is not None and not 1 <= batch_size <= 1_000_000:
        raise UserError(f"--batch-size {batch_size}: must be between 1 and 1000000")
    store = _optional_store(db, named_must_exist=False)   # a what-if needs no measurements
    plan = models.of(workload).plan     # the physics says which model plans (analysis/physics/models.py PLANS)
    if plan == "serving":
        raise UserError(f"whatif -w {workload}: serving on N GPUs is tensor parallel, modelled by "
                        "`gpuarena advise -w llm-serve --gpus N` (and `check -w llm-serve --gpus N`)")
    if plan == "training":    # the training plan (cli/llm_cmds.py)
        from gpuarena.cli.llm_cmds import whatif_llm
        _out(whatif_llm(model, tokens, gpu, gpu_counts(n), mfu, variant, store, fmt, seq_len, busbw, unused={
            "--overlap": overlap, "--batch-size": batch_size, "--throughput": throughput, "--bucket-mb": bucket_mb}))
        return
    refuse_ignored(f"whatif -w {workload}", {"--tokens": tokens is not None, "--mfu": mfu is not None,
                                             "--seq-len": seq_len is not None})
    _out(render(W.predict(workload, gpu, gpu_counts(n), store, busbw, overlap, batch_size, throughput, model,
                               variant, 25.0 if bucket_mb is None else bucket_mb), fmt))


@app.command()
def advise(workload: Optional[str] = typer.Option(None, "--workload", "-w", metavar="WORKLOAD", help="workload name (see `gpuarena list`)"), gpus: int = typer.Option(1, "--gpus", metavar="N"),
           budget: Optional[float] = typer.Option(None, "--budget", help="$ for purchase (or cloud with --hours)", metavar="DOLLARS"),
           hours: Optional[float] = typer.Option(None, "--hours", help="hours of cloud use to price", metavar="HOURS"),
           min_memory: Optional[float] = typer.Option(None, "--min-memory", help="GB per GPU at least", metavar="GB"),
           precision: Optional[str] = typer.Option(None, "--precision", help="rank only this precision class", metavar="PRECISION"),
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
    from gpuarena.analysis.physics import models
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
        _out(render_validation(J.validate(), fmt))
        return
    if not workload:
        raise UserError("advise needs --workload (or --validate)")
    plan = models.of(workload).plan     # the physics says which model plans (analysis/physics/models.py PLANS)
    if plan != "catalog":
        from gpuarena.cli import llm_cmds   # the serving model (what fits, TTFT, tokens/s), or one training plan

        llm = {"serving": llm_cmds.advise_serving, "training": llm_cmds.advise_training}[plan]
        _out(llm(sets, gpus, min_memory, precision, budget, hours, prices, db, fmt, include_consumer, basis))
        return
    if sets:
        raise UserError("--set is for advise -w llm-serve and llm-train")
    over = load_prices(prices)
    from gpuarena.data.prices import BASES

    if basis not in BASES:
        raise UserError(f"--price-basis {basis!r}: choose one of {', '.join(BASES)}")
    _out(render(A.advise(open_store(db, readonly=True), workload, gpus, budget, hours, min_memory, over,
                           precision, include_consumer, basis), fmt))
