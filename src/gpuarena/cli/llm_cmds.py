"""The LLM branches of the decision verbs: `whatif -w llm-train` (analysis/physics/llm_plan.py) and
`advise -w llm-serve` (analysis/verbs/serving.py).  Every option the verb accepts is used here or
refused with the reason; none is ignored."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuarena.errors import UserError, brief

if TYPE_CHECKING:
    from gpuarena.store.result import Result


def _results(db: str | None) -> list[Result]:
    from gpuarena.cli.common import open_store
    from gpuarena.store.db import default_path, exists

    path = db or default_path()
    return open_store(path, readonly=True).results() if exists(path) else []


def advise_serving(sets: list[str], gpus: int, min_memory: float | None, precision: str | None,
                   budget: float | None, hours: float | None, prices: str | None, db: str | None, fmt: str,
                   include_consumer: bool = False, basis: str = "cloud") -> str:
    from gpuarena.analysis.verbs import serving as S
    from gpuarena.data.catalog import load_prices
    from gpuarena.report.text.serving import render

    unused = [name for name, v in (("--budget", budget), ("--hours", hours)) if v is not None]
    if unused:
        raise UserError(f"{', '.join(unused)}: advise -w llm-serve ranks by sustained tokens/s and prices it by "
                        "the cloud $/GPU-hour (--prices to override); it takes no budget")
    if basis != "cloud":
        raise UserError(f"--price-basis {basis}: advise -w llm-serve prices tokens by the cloud $/GPU-hour")
    if precision is not None:
        if any(x.strip().startswith("precision=") for x in sets):
            raise UserError("give the weights' precision once: --precision or --set precision=")
        sets = [*sets, f"precision={precision.strip().lower()}"]
    return render(S.advise(_results(db), sets, min_memory, gpus, include_consumer, load_prices(prices)), fmt)


TRAIN_ADVICE_KEYS = {"shape": str, "tokens": float, "seq_len": int, "mfu": float, "busbw": float}


def advise_training(sets: list[str], gpus: int, min_memory: float | None, precision: str | None,
                    budget: float | None, hours: float | None, prices: str | None, db: str | None, fmt: str,
                    include_consumer: bool = False, basis: str = "cloud") -> str:
    """advise -w llm-train --set shape=... --gpus N: every GPU on the same training plan (llm_advice.rank)."""
    from gpuarena.analysis.physics import llm_advice
    from gpuarena.data.catalog import load_prices
    from gpuarena.report.text.llm_claims import render_ranking
    from gpuarena.safeio import finite

    unused = [name for name, v in (("--budget", budget), ("--hours", hours)) if v is not None]
    if unused:
        raise UserError(f"{', '.join(unused)}: advise -w llm-train prices the whole run (days x GPUs x $/GPU-hour, "
                        "or the GPUs' purchase with --price-basis purchase); it takes no budget")
    given: dict = {}
    for item in sets:
        k, sep, v = (x.strip() for x in item.partition("="))
        if not sep or k not in TRAIN_ADVICE_KEYS:
            raise UserError(f"--set: advise -w llm-train takes {', '.join(f'{x}=' for x in TRAIN_ADVICE_KEYS)}, "
                            f"not {brief(item)}")
        try:
            given[k] = TRAIN_ADVICE_KEYS[k](float(v)) if TRAIN_ADVICE_KEYS[k] is int else TRAIN_ADVICE_KEYS[k](v)
        except ValueError:
            raise UserError(f"--set {k}: a number, not {brief(v)}") from None
        if k != "shape":
            finite(given[k], k, cap=1.0 if k == "mfu" else 1e18)
    if "shape" not in given:
        raise UserError("advise -w llm-train plans one model on --gpus N: give --set shape= (e.g. llama3-8b)")
    prec = (precision or "bf16").strip().lower()
    if prec not in ("bf16", "fp16", "fp8"):
        raise UserError(f"--precision {precision}: the training plan runs bf16, fp16 or fp8")
    out = llm_advice.rank(_results(db), given["shape"], gpus, prec, given.get("tokens", 1e12), given.get("seq_len"),
                          given.get("mfu"), given.get("busbw"), load_prices(prices), basis, include_consumer,
                          min_memory)
    return render_ranking(out, fmt)


def llm_claim_sets(sets: list[str], workload: str | None) -> dict:
    """check --set KEY=VALUE: the conditions of an LLM claim (the model; for serving, the lengths)."""
    from gpuarena.analysis.physics import models
    from gpuarena.analysis.physics.llm_claims import TRAIN_KEYS
    from gpuarena.analysis.physics.serving_claims import SERVE_KEYS

    keys = (SERVE_KEYS if models.SERVING.judges(workload) else
            TRAIN_KEYS if models.DECODER_TRAINING.judges(workload) else None)
    if keys is None:
        raise UserError("--set is for llm-serve claims (shape=, hf_config=, prompt_len=, new_tokens=) and "
                        "llm-train claims (shape=, hf_config=)")
    out = {}
    for item in sets:
        k, sep, v = item.partition("=")
        if not sep or k.strip() not in keys:
            raise UserError(f"--set: an {workload} claim takes {', '.join(f'{x}=' for x in keys)}, not {brief(item)}")
        out[k.strip()] = v.strip()
    return out


def check_serving_ratio_cli(gpu, vs, ratio, workload, precision, batch_size, gpus, replicas, sets, store, fmt: str,
                            figures: dict) -> str:
    """check -w llm-serve --vs B --ratio R: the serving model's ratio at the claim's conditions (each card at
    the largest batch it holds where no --batch-size is given: max throughput)."""
    from gpuarena.analysis.physics.ratio import parse_range
    from gpuarena.analysis.physics.serving_claims import check_serving_ratio
    from gpuarena.report.text.ratio import render

    if vs is None or ratio is None or gpu is None:
        raise UserError("a ratio claim needs --gpu, --vs and --ratio")
    given = [k for k, v in figures.items() if v is not None]
    if given:
        raise UserError(f"an llm-serve ratio claim states --ratio only ({', '.join(given)} is another claim)")
    lo, hi = parse_range(ratio)
    cond = {"workload": workload, "precision": precision, "batch_size": batch_size, "gpus": gpus,
            "replicas": replicas, **llm_claim_sets(sets, workload)}
    return render([check_serving_ratio(gpu, vs, lo, hi, cond, store)], fmt)


def refuse_unused(**given) -> None:
    """whatif -w llm-train plans from the model, the GPU, the count, the tokens, the sequence length, the
    MFU and the network between nodes: the data-parallel options mean nothing to it."""
    used = [k for k, v in given.items() if v is not None]
    if used:
        raise UserError(f"{', '.join(used)}: not used by whatif -w llm-train (the plan takes --model, --gpu, "
                        "--n, --tokens, --seq-len, --mfu, --busbw and --variant); leave them out")


def _precision(variant: str | None) -> tuple[str, bool | None]:
    """The precision and checkpointing a llm-train variant names; unknown components refused."""
    from gpuarena.analysis.physics import models
    from gpuarena.workloads import registry

    if not variant:
        return "bf16", None
    known = registry.get(models.DECODER_TRAINING.workloads()[0]).variants
    parts = [p.strip() for p in variant.split("+") if p.strip()]
    bad = [p for p in parts if p not in known]
    if bad:
        raise UserError(f"--variant {variant!r}: {', '.join(bad)} is not an llm-train variant "
                        f"({', '.join(known)})")
    if "seed" in parts or "tf32" in parts:
        raise UserError(f"--variant {variant!r}: the plan models bf16 or fp8 training (seed and tf32 run FP32/TF32)")
    return ("fp8" if "fp8" in parts else "bf16"), ("activation-checkpointing" in parts or None)


def _share(mfu: str | None, results: list, model: str, gpu: str, n: int, precision: str):
    """(MFU, (low, high) or None, where it comes from): given, 'measured', or the evidence (llm_efficiency)."""
    from gpuarena.analysis.physics import llm_advice, llm_efficiency
    from gpuarena.data import catalog
    from gpuarena.safeio import finite

    if mfu in (None, ""):
        e = llm_efficiency.efficiency(model, catalog.match(gpu), n, precision, results)
        return e.mfu, (e.low, e.high), f"evidence: {e.source} (band {e.low:.1%}-{e.high:.1%} over {e.runs} run(s))"
    if mfu == "measured":
        share, source = llm_advice.measured_mfu(results, precision, model, n)
        return share, None, source
    try:
        share = float(mfu)
    except ValueError:
        raise UserError(f"--mfu {mfu!r}: a share of peak such as 0.4, or 'measured'") from None
    finite(share, "--mfu", cap=1.0)
    return share, None, "given (end to end, as papers quote it)"


def whatif_llm(model: str | None, tokens: float | None, gpu: str, counts: list[int], mfu: str | None,
               variant: str | None, store, fmt: str, seq_len: int | None = None, busbw: float | None = None,
               unused: dict | None = None) -> str:
    from gpuarena.analysis.physics import llm_plan
    from gpuarena.analysis.physics.training_network import GPUS_PER_NODE, resolve as resolve_network
    from gpuarena.data import catalog
    from gpuarena.report.text.llm_claims import render_plan
    from gpuarena.safeio import finite

    refuse_unused(**(unused or {}))
    precision, _ = _precision(variant)
    finite(tokens, "--tokens", cap=1e18)
    if busbw is not None and max(counts) <= GPUS_PER_NODE:
        raise UserError(f"--busbw {busbw:g}: the bandwidth between nodes, and every count here ({max(counts)} at most) "
                        f"fits one {GPUS_PER_NODE}-GPU node; leave it out")
    model = model or "gpt3-175b"
    results = store.results() if store is not None else []
    plans = []
    for n in counts:
        if mfu in (None, ""):     # the network before the evidence: it is the user's to give
            resolve_network(catalog.match(gpu), n, busbw)
        share, band, source = _share(mfu, results, model, gpu, n, precision)
        plans.append(llm_plan.plan(model, tokens if tokens is not None else 300e9, gpu, n, share, precision,
                                   seq_len=seq_len, mfu_from=source, busbw=busbw, mfu_band=band))
    if fmt == "json":
        return render_plan({"plans": plans}, "json")
    return "\n".join(render_plan(p, fmt) for p in plans)
