"""Article 001's three claims about training a 175B model, judged by analysis/physics/llm_plan.py.

The article (section 4.3) states, without a setup: the H100 saves 40% of the A100's training
time; 8 A800s take 23% longer than 8 A100s; one H100 holds a 1.8x larger batch than an A100.
Each is set against the memory and time model at the same MFU on both cards (the model's
figure is what the hardware allows; a measured run can only fall short of it), and the
verdict says whether the claim is consistent, understated, or cannot hold.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel, RootModel

from gpuarena.analysis.physics import llm_plan as P
from gpuarena.analysis.physics.llm_efficiency import bf16_ceiling, fp8_ceiling
from gpuarena.analysis.physics.llm_shapes import PLAN_SHAPES, model_config
from gpuarena.analysis.rows.mfu import mfu as measured_mfu
from gpuarena.analysis.physics.roofline import claim_gpus, claim_number as _num
from gpuarena.analysis.physics.credible import spread as run_spread
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads.llm.flops import flops_per_token
from gpuarena.workloads.llm.shapes import resolve_shape
from gpuarena.analysis.rows.verdict import ClaimVerdict as V

MODEL = "gpt3-175b"
TOKENS = 300e9          # GPT-3's training tokens (Brown et al. 2020, section 2.2)
N_LARGE = 1024          # a cluster size at which 175B fits with room for a batch
MFU = 0.4               # the same utilisation on both cards: the ratio then reflects the hardware


class ArticleClaim(BaseModel):
    """One of article 001's 175B claims against the memory and time model: what was claimed, what the model
    says (the figure and its text), the verdict and why."""

    claim: str
    claimed: float
    model: float
    model_text: str
    verdict: V
    reason: str


class ArticleClaims(RootModel[list[ArticleClaim]]):
    """`gpuarena check -w llm-train`: article 001's claims, in the article's order."""

    def __iter__(self):
        return iter(self.root)

    def __len__(self) -> int:
        return len(self.root)


def _days(gpu: str, n: int, precision: str = "bf16", mfu: float | None = MFU) -> P.PlanRow:
    return P.plan(MODEL, TOKENS, gpu, n, mfu, precision).rows[0]


def h100_saves_40() -> ArticleClaim:
    a100, h100 = _days("A100 80GB SXM4", N_LARGE), _days("H100 80GB SXM5", N_LARGE)
    h100_fp8 = _days("H100 80GB SXM5", N_LARGE, "fp8")
    saved, saved_fp8 = 1 - h100.days / a100.days, 1 - h100_fp8.days / a100.days
    # the plan's own breakdown: the same compute efficiency on both, each card's own links
    b100, b_h100 = _days("A100 80GB SXM4", N_LARGE, mfu=None), _days("H100 80GB SXM5", N_LARGE, mfu=None)
    saved_own = 1 - b_h100.days / b100.days
    return ArticleClaim.model_validate({
            "claim": "H100 saves 40% of the A100's 175B training time", "claimed": 0.40,
            "model": saved, "model_text": f"{saved:.0%} saved in bf16, {saved_fp8:.0%} with FP8 "
                                          f"({a100.days:.0f} vs {h100.days:.0f} days on {N_LARGE} GPUs at MFU {MFU}); "
                                          f"{saved_own:.0%} by the breakdown with communication",
            "verdict": V.UNDERSTATED,
            "reason": f"at equal MFU the H100's 3.2x dense bf16 peak saves {saved:.0%} ({saved_own:.0%} once "
                      f"NVLink and network time are counted); 40% means the H100 ran at {(1 - saved) / 0.6:.2f}x "
                      "the A100's MFU"})


def a800_23_longer() -> ArticleClaim:
    cfg = model_config(MODEL)
    g100, g800 = catalog.match("A100 80GB SXM4"), catalog.match("A800 80GB SXM4")
    lay = P.choose_layout(cfg, 8, g100.memory_gb, 2048, P.GPT3_BATCH)
    mem = P.memory_per_gpu(cfg, lay)["total"]
    # the breakdown, not an end-to-end MFU: the interconnect is what differs between the two
    t100, t800 = P.step_time(cfg, lay, g100, None), P.step_time(cfg, lay, g800, None)
    longer = t800["step_s"] / t100["step_s"] - 1
    total, _ = P.param_counts(cfg)
    return ArticleClaim.model_validate({
            "claim": "8x A800 take 23% longer than 8x A100 to train 175B", "claimed": 0.23, "model": longer,
            "model_text": f"{mem / 1e9:.0f} GB per GPU needed on 8 GPUs (80 GB each); if it fitted, "
                          f"{longer:.1%} longer (TP=8 over 400 vs 600 GB/s NVLink)",
            "verdict": V.IMPOSSIBLE,
            "reason": f"{total / 1e9:.0f}B parameters with AdamW need {16 * total / 1e12:.1f} TB of weights, gradients "
                      f"and optimizer state; 8 x 80 GB hold 0.64 TB, so no 8-GPU run of 175B training exists to time"})


def h100_batch_18() -> ArticleClaim:
    cfg = model_config(MODEL)
    # the layout the smallest card needs, so that every card holds a micro-batch at it
    lay = P.choose_layout(cfg, N_LARGE, 40, 2048, P.GPT3_BATCH)
    b = {name: P.largest_micro_batch(cfg, lay, catalog.match(name).memory_gb)
         for name in ("H100 80GB SXM5", "A100 80GB SXM4", "A100 40GB SXM4")}
    r80 = b["H100 80GB SXM5"] / b["A100 80GB SXM4"]
    r40 = b["H100 80GB SXM5"] / b["A100 40GB SXM4"] if b["A100 40GB SXM4"] else None
    return ArticleClaim.model_validate({
            "claim": "one H100 holds a 1.8x larger batch than an A100 (175B)", "claimed": 1.8, "model": r80,
            "model_text": f"largest micro-batch at TP={lay.tp} PP={lay.pp}: H100 80GB {b['H100 80GB SXM5']}, "
                          f"A100 80GB {b['A100 80GB SXM4']}, A100 40GB {b['A100 40GB SXM4']}",
            "verdict": V.NOT_SUPPORTED,
            "reason": f"the batch a GPU holds is set by its memory, and the H100 and the A100 80GB both have 80 GB: "
                      f"{r80:.1f}x; against the A100 40GB it is {r40:.1f}x" if r40 else
                      f"the same 80 GB give {r80:.1f}x; an A100 40GB holds no micro-batch at this layout"})


def judge() -> ArticleClaims:
    return ArticleClaims([h100_saves_40(), a800_23_longer(), h100_batch_18()])


# --- llm-train throughput claims: model FLOPs over the peak -----------------------------------

TRAIN_KEYS = ("shape", "hf_config", "model")


def _memory_short(cfg, g: catalog.GPU, n: int, seq: int) -> str:
    """'' when some layout holds a training step on n of these cards (FSDP, or Megatron TP x PP where it
    divides; activation checkpointing, one sequence per GPU), else why not (offloading aside)."""
    lays = [P.fsdp_layout(cfg, n, g.memory_gb, seq, n, True), *P.megatron_candidates(cfg, n, g.memory_gb, seq, n, True)]
    need = min(P.memory_per_gpu(cfg, replace(x, micro_batch=1))["total"] for x in lays)
    if need <= g.memory_gb * 1e9 * P.USABLE_MEMORY:
        return ""
    return (f"a training step needs at least {need / 1e9:,.0f} GB per GPU ({sum(P.BYTES.values())} bytes per "
            f"parameter for weights, gradients and AdamW state, FSDP or Megatron over {n} GPU(s), activation "
            f"checkpointing, one sequence of {seq} per GPU); the {g.short} has {g.memory_gb:g} GB, "
            f"{P.USABLE_MEMORY:.0%} usable: only offloading to host memory would run it")


def check_training(claim: dict, store=None) -> dict:
    """Training tokens/s (all GPUs together) of a decoder: the implied model-FLOPs utilisation.
    Impossible above 1 (model FLOPs cannot outrun the peak); implausible above the best MFU credibly
    reached (bf16: the published ceiling or a stored llm-train result; fp8: llm_efficiency.fp8_ceiling,
    its parts' bound); plausible otherwise."""
    unused = [k for k in ("image_size", "steps", "scaling", "latency") if claim.get(k) not in (None, "")]
    if unused:
        raise UserError(f"llm-train claim: {', '.join(unused)} mean nothing here (give tokens/s over all GPUs, "
                        "--gpus, --seq-len and the model with --set shape=)")
    g = catalog.match(claim["gpu"])
    prec = {"bf16": "bf16", "amp-bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "amp-fp16": "fp16",
            "fp8": "fp8"}.get(str(claim.get("precision")).strip().lower())
    if prec is None:
        raise UserError(f"llm-train claim precision {claim.get('precision')!r}: bf16, fp16 or fp8 (MFU at that peak)")
    shape = claim.get("shape") or claim.get("model") or ""
    cfg = PLAN_SHAPES.get(shape) if not claim.get("hf_config") else None
    cfg = cfg or resolve_shape(shape or "llama-1b", claim.get("hf_config") or "")
    seq = int(_num(claim, "seq_len") or 2048)
    n = claim_gpus(claim)
    thr = _num(claim, "throughput")
    peak = g.peaks.get(prec)
    if thr is None or not peak:
        raise UserError(f"llm-train claim on {g.short}: give --throughput (tokens/s) and a precision the card has")
    fpt = flops_per_token(cfg, seq, training=True)
    implied = thr / n * fpt / 1e12
    mfu = implied / peak
    stored = [m for r in (store.results(workload=claim["workload"]) if store is not None else [])
              if r.status == "ok" and r.precision == prec
              for m in [measured_mfu(r)] if m is not None and 0 < m <= 1]
    spread = run_spread(store, claim["workload"])[0]
    # BF16 and FP16 run on the same tensor cores at the same rate: one ceiling for both
    top = bf16_ceiling()    # the best BF16 run of data/training_mfu.csv, by gpuarena's FLOP count
    ceil, src = (max([top[0], *stored]), top[1]) if prec in ("bf16", "fp16") else fp8_ceiling(
        cfg, seq, g, store, stored)
    if stored and ceil is not None and max(stored) > top[0] and prec != "fp8":
        src = "a stored llm-train result"
    head = (f"{thr / n:,.0f} tokens/s per GPU x {fpt / 1e9:.1f} GFLOP per token (6 N + 12 L H T at {seq}) = "
            f"{implied:.0f} TFLOP/s, MFU {mfu:.1%} of the {g.short}'s {prec} peak ({peak:g})")
    short = _memory_short(cfg, g, n, seq)
    if mfu > 1 or short:
        v, reason = V.IMPOSSIBLE, f"{head}: " + ("above the peak" if mfu > 1 else short)
    elif ceil is None:
        v, reason = V.PLAUSIBLE, f"{head}; no credible {prec} MFU ceiling known, so only the peak bounds it"
    elif mfu > ceil * (1 + spread):
        v, reason = V.IMPLAUSIBLE, (f"{head}: above the best {ceil:.1%} credibly reached ({src}), widened by the "
                                    f"run-to-run spread {spread:.1%}")
    else:
        v, reason = V.PLAUSIBLE, f"{head}: within the best {ceil:.1%} credibly reached ({src})"
    return {"gpu": g.name, "workload": claim["workload"], "precision": claim["precision"], "executed": prec,
            "executed_as": f"{prec} matmuls", "batch_size": int(float(claim.get("batch_size") or 1)),
            "params": {"seq_len": seq}, "gpus": n, "throughput": thr, "latency": None, "scaling": None,
            "flops_per_item": fpt, "source": claim.get("source", ""), "verdict": v, "implied_tflops": implied,
            "peak_tflops": peak, "share_of_peak": mfu, "ceiling": None, "reason": reason,
            "credible_max": None if ceil is None else min(1.0, ceil * (1 + spread)) * peak * 1e12 / fpt}
