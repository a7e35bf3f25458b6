"""The MFU an LLM-training plan runs at, from evidence: published runs (data/training_mfu.csv:
torchtitan, Megatron-LM, the Llama 2 paper) and gpuarena's own llm-train results, by model size,
GPU generation and GPU count.  One rule for `whatif -w llm-train`, `advise -w llm-train` and
`check -w llm-train` (llm_claims.check_training's FP8 bound).

Each run's MFU is gpuarena's own count (6 N + 12 L H T model FLOPs per token, flops.py) of its
tokens/s per GPU over the catalog's dense peak at the run's precision (FP8 runs: of the FP8 peak),
so a published page's own MFU (torchtitan's counts differ by a few percent) is not mixed in.

Comparable: the same precision class (BF16 and FP16 share the tensor-core rate), a model within
2x of the size asked (non-embedding parameters) and a GPU count within 16x (a count the source
does not state, as the Llama 2 paper's, matches any), on the GPU's own architecture generation:
another generation's MFU does not carry (an L40S has 2.7x the A100's FLOP/byte), so a generation
without evidence gets none and the plan needs --mfu.  The point is the best run nearest in size and
GPU count (log distance; the best engine the evidence shows there); the band spans every comparable run.

FP8 without evidence at the claim's scale: fp8_bound, the parts that are physical: attention
(12 L H T, in BF16 in every FP8 recipe published: torchao's Float8 and Transformer Engine convert
the linears) at the BF16 peak, the GEMMs (6 N) at the best FP8 GEMM share published for the
generation (data/micro_ceilings.csv), unverified as a training figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuarena.analysis.physics import judged, micro_check
from gpuarena.analysis.rows import precision as PR
from gpuarena.analysis.physics.llm_shapes import PLAN_SHAPES, model_config
from gpuarena.analysis.rows.mfu import mfu as result_mfu
from gpuarena.data import catalog
from gpuarena.data.training_evidence import training_runs
from gpuarena.errors import UserError
from gpuarena.store.flags import diverged
from gpuarena.workloads.llm.flops import flops_per_token, param_counts

SIZE_WINDOW = 2.0      # model size within 2x of the one asked
COUNT_WINDOW = 16.0    # GPU count within 16x (torchtitan's 8- and 128-GPU tables are one scale family)


@dataclass(frozen=True)
class Run:
    """One training run as evidence: its MFU of the peak at its precision."""
    gpu: str
    gpus: int | None
    params: float            # non-embedding parameters
    precision: str           # bf16 or fp8 (fp16 counted as bf16)
    mfu: float
    source: str
    measured: bool = False

    @property
    def generation(self) -> str:
        return PR.arch_of(catalog.match(self.gpu))


@dataclass(frozen=True)
class Efficiency:
    mfu: float               # the best comparable run at the nearest GPU count
    low: float
    high: float
    source: str
    runs: int                # comparable runs the band spans


def _cls(precision: str) -> str:
    return "fp8" if precision == "fp8" else "bf16"


def published_runs() -> list[Run]:
    out = []
    for r in training_runs():
        g, cfg = catalog.match(r.gpu), model_config(r.model)
        peak = g.peak("fp8" if r.precision == "fp8" else "bf16")
        share = r.tokens_per_gpu_s * flops_per_token(cfg, r.seq_len, training=True) / (peak * 1e12)
        where = f"{r.engine}, {r.model} seq {r.seq_len} on {r.gpus or '?'} x {g.short}, {r.layout}: {r.source}"
        out.append(Run(g.name, r.gpus, float(param_counts(cfg)[0]), _cls(r.precision), share, where))
    return out


def stored_llm_train(results: list, precision: str) -> list:
    """The ok, finite llm-train results at this precision with an MFU in (0, 1]."""
    return [r for r in results if judged.judges("decoder-training", r.workload)
            and r.status == "ok" and r.precision == precision and not diverged(r)
            and 0 < (result_mfu(r) or 0) <= 1]


def size_of(r) -> float | None:
    """A stored result's non-embedding parameters, from its record or its named shape."""
    shape = r.extra.shape or r.params.get("shape")
    if r.extra.params:
        return float(r.extra.params)
    return float(param_counts(PLAN_SHAPES[shape])[0]) if shape in PLAN_SHAPES else None


def stored_runs(results: list, precision: str) -> list[Run]:
    out = []
    for r in stored_llm_train(results, precision):
        g, size = catalog.find(r.device_name or ""), size_of(r)
        if g is not None and size:
            out.append(Run(g.name, r.gpus, size, _cls(precision), result_mfu(r),
                           f"measured: {g.short} x{r.gpus}, {r.variant}, {r.extra.shape}, result {r.id}", True))
    return out


def _comparable(run: Run, want: float, n: int) -> bool:
    size_ok = 1 / SIZE_WINDOW <= run.params / want <= SIZE_WINDOW
    return size_ok and (run.gpus is None or 1 / COUNT_WINDOW <= run.gpus / n <= COUNT_WINDOW)


def efficiency(model: str, gpu: catalog.GPU, n: int, precision: str, results: list | None = None,
               runs: list[Run] | None = None) -> Efficiency:
    """The MFU of comparable evidence on the GPU's generation (module docstring), or a UserError naming
    the nearest evidence and asking for --mfu.  ``runs``: the evidence instead of the published runs and
    the stored results (the hold-out in analysis/verbs/llm_holdout.py leaves one run out)."""
    want = float(param_counts(model_config(model))[0])
    cls, gen = _cls(precision), PR.arch_of(gpu)
    runs = published_runs() + stored_runs(results or [], precision) if runs is None else runs
    pool = [r for r in runs if r.precision == cls]
    near = [r for r in pool if _comparable(r, want, n)]
    here = [r for r in near if r.generation == gen]
    if not here:
        other = sorted(near or pool, key=lambda r: abs(math.log(r.params / want)))[:1]
        hint = (f"; the nearest is {other[0].mfu:.0%} on {catalog.match(other[0].gpu).short} "
                f"({'another generation' if near else 'another model size'}: {other[0].source[:90]})" if other else "")
        raise UserError(f"no published or measured {cls} training run of a model within {SIZE_WINDOW:g}x of {model} "
                        f"on {gpu.short}'s generation ({gen.capitalize()}) at a GPU count within {COUNT_WINDOW:g}x of "
                        f"{n}{hint}; give --mfu (a share of the {cls} peak, e.g. 0.35)")
    def dist(r: Run) -> float:   # size, then count; a count not stated is the farthest the window takes
        count = abs(math.log(r.gpus / n)) if r.gpus else math.log(COUNT_WINDOW)
        return round(abs(math.log(r.params / want)) + count, 6)

    near_d = min(dist(r) for r in here)
    best = max((r for r in here if dist(r) == near_d), key=lambda r: r.mfu)
    return Efficiency(best.mfu, min(r.mfu for r in here), max(r.mfu for r in here),
                      f"{best.mfu:.1%} from {best.source}", len(here))


def bf16_ceiling() -> tuple[float, str]:
    """The best BF16/FP16 training MFU published (by gpuarena's count) and where it comes from: torchtitan's
    Llama 2 13B on 64 A100s without checkpointing, 60.4% (the page counts 61.1%)."""
    best = max((r for r in published_runs() if r.precision == "bf16"), key=lambda r: r.mfu)
    return best.mfu, f"{best.mfu:.1%} from {best.source}"


def fp8_bound(cfg, seq: int, gpu: catalog.GPU, store=None) -> tuple[float, str] | None:
    """The most of the FP8 peak an FP8 training step can credibly reach: attention at the BF16 peak, GEMMs
    at the best FP8 GEMM share published for the generation; None without such a share."""
    fp8, bf16 = gpu.peak("fp8"), gpu.peak("bf16")
    c = micro_check.ceiling("compute-peak", "fp8", PR.arch_of(gpu), store)
    if not (fp8 and bf16) or c is None:
        return None
    attn = 12.0 * cfg.n_layers * cfg.dim * seq
    gemm = flops_per_token(cfg, seq, training=True) - attn
    seconds = attn / bf16 + gemm / (fp8 * c.best.share)
    mfu = (attn + gemm) / seconds / fp8
    e = c.best
    return mfu, (f"attention ({attn / (attn + gemm):.0%} of the FLOPs at {seq} tokens) at the BF16 peak ({bf16:g}), "
                 f"GEMMs at the best FP8 GEMM share published, {e.share:.0%} ({e.value:,.0f} TFLOP/s on "
                 f"{catalog.match(e.gpu).short}, {e.engine})" + ("; borrowed from another generation" if c.borrowed
                                                                 else ""))


def fp8_ceiling(cfg, seq: int, g: catalog.GPU, store, stored: list[float]) -> tuple[float | None, str]:
    """FP8 training's ceiling: its physical parts (llm_efficiency.fp8_bound: attention at the BF16 peak,
    GEMMs at the best FP8 GEMM share published), unverified as a training figure, or a published or
    stored FP8 run of this generation where one reaches higher."""
    bound = fp8_bound(cfg, seq, g, store)
    runs = [r for r in published_runs() if r.precision == "fp8" and r.generation == PR.arch_of(g)]
    best = max(runs, key=lambda r: r.mfu, default=None)
    top = max([x for x in (best.mfu if best else None, *stored) if x is not None], default=None)
    if bound is None:
        return (top, f"the best FP8 training run of the generation ({best.source})" if best else "a stored result") \
            if top else (None, "")
    if top is not None and top > bound[0]:
        return top, f"an FP8 training run above its parts' bound ({best.source if best else 'a stored result'})"
    seen = f"; the best FP8 training run published reaches {best.mfu:.0%} ({best.source[:80]})" if best else ""
    return bound[0], f"unverified, no FP8 training run reaches it: bounded by its parts, {bound[1]}{seen}"
