"""What measured llm-train results add to advice and plans: the memory a measured run needed,
measured scaling, the compute efficiency one GPU reaches, and an MFU of comparable scale.

A card with less memory per GPU than the fastest measured single-GPU run needed cannot run
that configuration at all, however fast its peak; with --gpus N the scaling efficiency is the
one llm-train measured at N ranks (FSDP2, TP ...), not the DDP interconnect model.
"""

from __future__ import annotations

from typing import Any, Optional, Union

from pydantic import BaseModel

from gpuarena.analysis.rows import common as R
from gpuarena.analysis.rows.derived import with_derived
from gpuarena.analysis.physics.llm_efficiency import size_of as _size_of, stored_llm_train as _llm_train
from gpuarena.analysis.physics.llm_plan import DEFAULT_COMPUTE_EFF
from gpuarena.analysis.physics.llm_shapes import model_config
from gpuarena.analysis.rows.mfu import mfu
from gpuarena.errors import UserError
from gpuarena.workloads.llm.flops import param_counts
from gpuarena.store.result import Result


def adjust(rows: list[dict], excluded: list[dict], results: list[Result], gpus: int) -> tuple[list[dict], list[dict]]:
    """advise's rows for llm-train, less the cards too small, scaled by the measured efficiency."""
    results = with_derived(results)   # scaling efficiency is computed when read, never stored
    single = [r for r in R.finite_first(results) if r.gpus == 1 and r.peak_memory_bytes]
    ref = max(single, key=lambda r: r.throughput_median) if single else None
    need = ref.peak_memory_bytes if ref else None
    effs = [r.derived.scaling_efficiency for r in R.finite_first(results)
            if r.gpus == gpus and r.derived.scaling_efficiency is not None]
    eff = max(effs) if effs and gpus > 1 else None
    kept = []
    for row in rows:
        if need and row["memory_gb"] * 1e9 < need:
            shape = ref.extra.shape or ref.params.get("shape")
            excluded.append({"gpu": row["gpu"], "reason": f"llm-train {shape} {ref.variant} needed "
                             f"{need / 1e9:.1f} GB per GPU on {R.gpu_of(ref)} (measured peak)"})
            continue
        if eff is not None:
            row = {**row, "throughput": row["throughput"] / max(row["scaling"], 1e-12) * eff, "scaling": eff,
                   "note": "; ".join(x for x in (row["note"], f"scaling {eff:.2f} as measured at {gpus} GPUs") if x)}
        kept.append(row)
    kept.sort(key=lambda x: -x["throughput"])
    for i, x in enumerate(kept, 1):
        x["rank"] = i
    return kept, excluded


def compute_efficiency(results: list[Result], precision: str) -> tuple[float, str]:
    """The compute share one GPU reaches: the best single-GPU llm-train MFU stored, else the default."""
    one = [r for r in _llm_train(results, precision) if r.gpus == 1]
    if not one:
        return DEFAULT_COMPUTE_EFF
    best = max(one, key=mfu)
    return mfu(best), f"measured: {best.device_name}, {best.variant}, result {best.id}"


def measured_mfu(results: list[Result], precision: str, model: str | None = None,
                 n: int | None = None) -> tuple[float, str]:
    """The best MFU stored by an ok, finite llm-train result at this precision, from a run of comparable
    scale: a model within 2x of the size asked and a GPU count within 8x (else refused, with why)."""
    mine = _llm_train(results, precision)
    if not mine:
        raise UserError(f"--mfu measured: no llm-train result at {precision} with an MFU is stored "
                        "(run llm-train on a catalog GPU, or give --mfu 0.4)")
    want = float(param_counts(model_config(model))[0]) if model else None
    ok, why = [], []
    for r in mine:
        size, gpus = _size_of(r), r.gpus
        if want and (not size or not 0.5 <= size / want <= 2):
            why.append(f"{(size or 0) / 1e9:.1f}B parameters vs {want / 1e9:.1f}B asked")
        elif n and not 1 / 8 <= gpus / n <= 8:
            why.append(f"{gpus} GPU(s) vs {n} asked")
        else:
            ok.append(r)
    if not ok:
        raise UserError(f"--mfu measured: no stored llm-train MFU comes from a comparable scale (model within 2x, "
                        f"GPU count within 8x): {'; '.join(sorted(set(why))[:3])}; give --mfu (e.g. 0.4) "
                        "or leave it out for the plan's own breakdown")
    best = max(ok, key=mfu)
    where = (f"measured: {best.device_name} x{best.gpus}, {best.variant}, "
             f"{best.extra.shape}, result {best.id}")
    return mfu(best), where


Num = Union[int, float]          # a figure keeps its type in the JSON


class RankedPlan(BaseModel):
    """One GPU on the training plan: its fastest layout that fits, the days (band) at its MFU, the price."""

    rank: int
    gpu: str
    days: Num
    days_low: Optional[Num] = None
    days_high: Optional[Num] = None
    mfu: Num
    mfu_from: str
    memory_gb: Num                  # needed per GPU
    gpu_memory_gb: Num              # the card's
    layout: dict[str, Any]          # tp, pp, dp, micro_batch (zero3)
    usd: Optional[Num] = None
    price_source: str
    bound: Optional[str] = None


class Unplanned(BaseModel):
    """A GPU left out of the ranking, and why."""

    gpu: str
    reason: str


class Ranking(BaseModel):
    """`gpuarena advise -w llm-train`: every catalog GPU on one training plan, fastest first."""

    model: str
    gpus: int
    precision: str
    tokens: Num
    basis: str
    seq_len: int
    rows: list[RankedPlan]
    excluded: list[Unplanned]


def rank(results: list[Result], model: str, n: int, precision: str = "bf16", tokens: float = 1e12,
         seq_len: int | None = None, mfu_given: float | None = None, busbw: float | None = None,
         prices: dict | None = None, basis: str = "cloud", include_consumer: bool = False,
         min_memory: float | None = None) -> Ranking:
    """Every catalog GPU on the same training plan (analysis/physics/llm_plan.py): n GPUs, the model, the tokens,
    each at its own evidence MFU (llm_efficiency) or the one given; ranked by days, priced on ``basis``
    (cloud: days x 24 x n x $/GPU-hour; purchase: n x $ per GPU).  A card is left out, with why, where
    no layout fits, no evidence covers its generation, or the plan needs a network figure it lacks."""
    from gpuarena.analysis.physics import llm_efficiency, llm_plan
    from gpuarena.data import catalog

    model_config(model)
    rows, excluded = [], []
    for g in catalog.priced(prices, basis, include_consumer):
        try:
            if min_memory and g.memory_gb < min_memory:
                raise UserError(f"below --min-memory {min_memory:g} GB")
            if not g.peak(precision):
                raise UserError(f"no {precision} peak")
            e = None if mfu_given is not None else llm_efficiency.efficiency(model, g, n, precision, results)
            p = llm_plan.plan(model, tokens, g.name, n, mfu_given if e is None else e.mfu, precision, seq_len,
                              busbw=busbw, mfu_band=None if e is None else (e.low, e.high),
                              mfu_from="given" if e is None else e.source)
        except UserError as exc:
            excluded.append({"gpu": g.name, "reason": str(exc)})
            continue
        fit = [r for r in p.rows if r.fits]
        if not fit:
            excluded.append({"gpu": g.name, "reason": p.rows[-1].why})
            continue
        best = min(fit, key=lambda r: r.days)
        price = g.price(basis)
        usd = None if price.usd is None else (best.days * 24 * n * price.usd if basis == "cloud" else n * price.usd)
        rows.append({"gpu": g.name, "days": best.days, "days_low": best.days_low, "days_high": best.days_high,
                     "mfu": p.mfu, "mfu_from": p.mfu_from, "memory_gb": best.memory["total"] / 1e9,
                     "gpu_memory_gb": g.memory_gb, "layout": best.layout, "usd": usd, "price_source": price.source,
                     "bound": best.bound})
    rows.sort(key=lambda r: r["days"])
    for i, r in enumerate(rows, 1):
        r["rank"] = i
    return Ranking(model=model, gpus=n, precision=precision, tokens=tokens, basis=basis,
                   seq_len=seq_len or model_config(model).max_seq_len, rows=rows, excluded=excluded)
