"""Verbs: compare, cost, check (whatif and advise: plan_cmds.py; export and import: bundle_cmds.py).

Published results are not loaded behind the user's back: `gpuarena import
--published` puts them in the database (source='published'), and from then on
compare, cost, check and advise use them beside measured rows, labelled.
"""

from __future__ import annotations

from typing import Optional

import typer

from gpuarena.cli.claim_input import check_claim_input, claims_of
from gpuarena.cli.common import (BASIS, FMT, PRICES, WORKLOAD, DbOption, check_format, open_store, optional_store,
                                 out, refuse_ignored)
from gpuarena.errors import UserError

app = typer.Typer()   # this module's verbs; cli/app.py puts them on the root, at the top level


@app.command()
def compare(baseline: str = typer.Option(..., "--baseline", "-b", metavar="GPU", help="baseline GPU, loosely named"),
            workload: Optional[str] = WORKLOAD,
            db: Optional[str] = DbOption, fmt: str = FMT) -> None:
    """Each GPU against a baseline: ratios, 95% CIs from the raw repeats, verdicts, geometric mean."""
    from gpuarena.analysis.verbs import compare as C
    from gpuarena.report.text.compare import render

    check_format(fmt, ("table", "md", "json"))
    out(render(C.compare(open_store(db, readonly=True), baseline, workload), fmt))


@app.command()
def cost(workload: Optional[str] = WORKLOAD,
         years: float = typer.Option(3.0, "--years", metavar="YEARS", help="TCO horizon in years"),
         gpus: int = typer.Option(1, "--gpus", metavar="N", help="fleet size for TCO"),
         kwh_price: Optional[float] = typer.Option(None, "--kwh-price", metavar="USD",
                                                   help="purchase basis: $ per kWh (default 0.12, an assumption)"),
         pue: Optional[float] = typer.Option(None, "--pue", metavar="RATIO",
                                             help="purchase basis: data-centre power usage effectiveness "
                                                  "(default 1.5)"),
         hosting: Optional[float] = typer.Option(None, "--hosting-per-gpu-year", metavar="USD",
                                                 help="purchase basis: $ per GPU-year for hosting (default 0)"),
         baseline: Optional[str] = typer.Option(None, "--baseline", "-b", metavar="GPU",
                                                help="GPU for relative perf/price"),
         basis: str = BASIS, prices: Optional[str] = PRICES, db: Optional[str] = DbOption, fmt: str = FMT) -> None:
    """Throughput per dollar on one price basis (cloud $/GPU-hour or purchase $), items per joule, fleet rent
    or TCO."""
    from gpuarena.analysis.verbs import cost as C
    from gpuarena.report.text.cost import render
    from gpuarena.data.catalog import load_prices
    from gpuarena.data.prices import check_basis

    check_format(fmt, ("table", "md", "json"))
    check_basis(basis)
    given = [n for n, v in (("--kwh-price", kwh_price), ("--pue", pue), ("--hosting-per-gpu-year", hosting))
             if v is not None]
    if basis == "cloud" and given:
        raise UserError(f"{', '.join(given)}: for --price-basis purchase (TCO); a cloud price includes power "
                        "and hosting")
    kwh = C.DEFAULT_KWH_PRICE if kwh_price is None else kwh_price
    pue = C.DEFAULT_PUE if pue is None else pue
    hosting = C.DEFAULT_HOSTING if hosting is None else hosting
    C.check_inputs(years, gpus, kwh, pue, hosting)
    over = load_prices(prices)
    out(render(C.cost_table(open_store(db, readonly=True), workload, years, gpus, kwh, pue, hosting,
                              over, baseline, basis=basis), fmt))


# check's options: one claim as stated (or --csv of many), a ratio claim (--vs, --ratio), an llm-serve claim
CLAIM_GPU = typer.Option(None, "--gpu", metavar="GPU", help="GPU the claim is about (see `gpuarena gpus`)")
CLAIM_PRECISION = typer.Option(None, "--precision", metavar="PRECISION",
                               help="default/fp32 (PyTorch defaults), fp32-ieee, tf32, bf16, fp16, fp8; "
                                    "llm-serve: the weights' bf16, fp16, fp8, int8, int4")
CLAIM_BATCH = typer.Option(None, "--batch-size", metavar="N", help="items per step of the claim")
CLAIM_THROUGHPUT = typer.Option(None, "--throughput", metavar="ITEMS_PER_S",
                                help="claimed items/s (all GPUs together); matmul: TFLOP/s; membw, h2d, d2h: GB/s; "
                                     "allreduce: bus bandwidth GB/s")
CLAIM_LATENCY = typer.Option(None, "--latency", metavar="SECONDS", help="claimed seconds per item")
CLAIM_SEQ_LEN = typer.Option(None, "--seq-len", metavar="TOKENS", help="tokens per sequence (BERT, LLM)")
CLAIM_IMAGE_SIZE = typer.Option(None, "--image-size", metavar="PIXELS", help="image height and width in pixels")
CLAIM_STEPS = typer.Option(None, "--steps", metavar="N", help="diffusion steps")
CLAIM_GPUS = typer.Option(None, "--gpus", metavar="N", help="GPU count of a multi-GPU throughput or scaling claim")
CLAIM_SCALING = typer.Option(None, "--scaling", metavar="COEFF", help="claimed scaling coefficient at --gpus")
CLAIM_REPLICAS = typer.Option(None, "--replicas", metavar="R",
                              help="llm-serve: --gpus as R independent copies, each TP over gpus/R "
                                   "(default: one TP copy)")
CLAIM_TTFT = typer.Option(None, "--ttft", metavar="SECONDS",
                          help="llm-serve: claimed time to the first token of --set prompt_len= tokens")
CLAIM_VS = typer.Option(None, "--vs", metavar="GPU", help="second GPU of a ratio claim")
CLAIM_RATIO = typer.Option(None, "--ratio", metavar="RATIO",
                           help="claimed throughput of --gpu / --vs; with --gpus, the claimed time ratio or range "
                                "(1.4-1.6 = 40-60% longer)")
CLAIM_WHAT = typer.Option("allreduce", "--what", metavar="WHAT", help="with --vs and --gpus: allreduce or step time")
CLAIM_CSV = typer.Option(None, "--csv", metavar="FILE",
                         help="CSV with gpu,workload,precision,batch_size,"
                              "throughput|latency|scaling[,seq_len,image_size,steps,gpus,source]")
CLAIM_SETS = typer.Option([], "--set", metavar="KEY=VALUE",
                          help="llm-serve: shape=, hf_config=, prompt_len=, new_tokens=; llm-train: shape=, hf_config=")


@app.command()
def check(gpu: Optional[str] = CLAIM_GPU,
          workload: Optional[str] = WORKLOAD,
          precision: Optional[str] = CLAIM_PRECISION,
          batch_size: Optional[int] = CLAIM_BATCH,
          throughput: Optional[float] = CLAIM_THROUGHPUT,
          latency: Optional[float] = CLAIM_LATENCY,
          seq_len: Optional[int] = CLAIM_SEQ_LEN,
          image_size: Optional[int] = CLAIM_IMAGE_SIZE,
          steps: Optional[int] = CLAIM_STEPS,
          gpus: Optional[int] = CLAIM_GPUS,
          scaling: Optional[float] = CLAIM_SCALING,
          replicas: Optional[int] = CLAIM_REPLICAS,
          ttft: Optional[float] = CLAIM_TTFT,
          vs: Optional[str] = CLAIM_VS,
          ratio: Optional[str] = CLAIM_RATIO,
          what: str = CLAIM_WHAT,
          csv_path: Optional[str] = CLAIM_CSV,
          sets: list[str] = CLAIM_SETS,
          db: Optional[str] = DbOption, fmt: str = FMT) -> None:
    """Is a published figure physically possible, judged as stated, at the precision it executed as?
    `-w llm-train` alone: article 001's 175B claims against the memory and time model."""
    from gpuarena.analysis.physics import models
    from gpuarena.analysis.verbs import check as C
    from gpuarena.report.text.check import render

    check_format(fmt, ("table", "md", "json"))
    if models.DECODER_TRAINING.judges(workload) and all(
            x is None for x in (gpu, precision, batch_size, throughput, csv_path)):
        out(_article_001_claims(fmt, {
            "--vs": vs is not None, "--ratio": ratio is not None, "--latency": latency is not None,
            "--seq-len": seq_len is not None, "--image-size": image_size is not None, "--steps": steps is not None,
            "--gpus": gpus is not None, "--scaling": scaling is not None, "--what": what != "allreduce"}))
        return
    serving = models.SERVING.judges(workload)
    if not serving and (replicas is not None or ttft is not None):
        raise UserError("--replicas and --ttft are for llm-serve claims (-w llm-serve)")
    store = optional_store(db)
    if serving and (vs is not None or ratio is not None):
        from gpuarena.cli.llm_cmds import check_serving_ratio_cli
        out(check_serving_ratio_cli(gpu, vs, ratio, workload, precision, batch_size, gpus, replicas, sets, store,
                                    fmt, {"--throughput": throughput, "--latency": latency, "--ttft": ttft}))
        return
    if vs is not None or ratio is not None:
        out(_check_ratio(gpu, vs, ratio, workload, precision, batch_size, gpus, what, throughput, store, fmt))
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
    out(render(C.check_claims(claims, store), fmt))


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
