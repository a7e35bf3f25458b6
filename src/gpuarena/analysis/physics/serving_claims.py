"""LLM serving claims judged by the serving model (serving_model.py): a throughput on N GPUs, a
time to the first token, or one card's throughput over another's.

- **Layout.** ``--gpus N`` is one copy of the model in tensor parallel over N GPUs; with
  ``--replicas R`` it is R independent copies (data parallel), each over N / R GPUs in tensor
  parallel.  The claim's tokens/s is all copies together; the batch is each copy's.  The output
  says which layout it judged.
- **Throughput.** Impossible above the physical bound (datasheet bandwidth, dense peak, no
  communication at all: an engine may overlap it) or where weights and KV do not fit; implausible
  above the bound at the best shares credibly reached (gpuarena's measurements, gpt-fast's,
  and the published engines' of serving_evidence.py), widened by the run-to-run spread.
- **TTFT** (``--ttft`` seconds for ``prompt_len`` tokens, the batch's prefill: one sequence
  unless a batch is given): impossible below the prefill at the dense peak (and one read of the
  weights), implausible below it at the best prefill MFU credibly reached.
- **Ratio** ("A serves x times B's tokens/s"): both cards at the claim's conditions; without a
  batch, "at max throughput": each card at the largest batch its memory holds at the context
  (weights + KV, with none or vLLM's / TensorRT-LLM's 10% kept back), memory checked on both
  sides.  The expected range spans the ratio at the physical bounds and at the credible shares.
"""

from __future__ import annotations

from gpuarena.analysis.physics import judged, serving_model as M
from gpuarena.analysis.physics import serving_evidence as SE
from gpuarena.analysis.physics.serving_layout import Layout, layout
from gpuarena.analysis.physics.roofline import claim_gpus, claim_number as _num
from gpuarena.analysis.physics.credible import spread as run_spread
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry
from gpuarena.workloads.llm import precisions as W
from gpuarena.workloads.llm.flops import prefill_flops
from gpuarena.analysis.rows.verdict import ClaimVerdict as V

SERVE_KEYS = ("shape", "hf_config", "prompt_len", "new_tokens")   # "model" is read as shape (published_claims.csv)
# vLLM (gpu_memory_utilization 0.9) and TensorRT-LLM (kv_cache_free_gpu_mem_fraction 0.9, MLPerf's
# configs/llama2-70b/Offline) keep 10% of memory back from the KV cache; a capacity ratio spans none to that.
KEPT_BACK = (0.0, 0.10)


def _kv_bytes(precision: str) -> int:
    """FP8 engines keep the KV cache in FP8 too (TensorRT-LLM's FP8 checkpoints): the favourable case."""
    return 1 if precision == "fp8" else 2


def check_serving(claim: dict, store=None) -> dict:
    """A serving claim as `check` states it: a ratio (vs, ratio), a TTFT (ttft) or a throughput."""
    if claim.get("vs") not in (None, "") or claim.get("ratio") not in (None, ""):
        return _ratio_as_check_row(claim, store)
    g, prec, cls, params, open_batch = _serving_claim(claim)
    cfg = cls.config(params)
    lay = layout(claim_gpus(claim), claim.get("replicas"))
    why = M.refusal(g, prec, cfg, lay.tp)
    if why:
        raise UserError(f"claim on {g.short}: {why}")
    if _num(claim, "ttft") is not None:
        return _check_ttft(claim, store, g, prec, cls, cfg, params, lay)
    thr, lat = _num(claim, "throughput"), _num(claim, "latency")
    prompt, out, kv, tp = params["prompt_len"], params["new_tokens"], _kv_bytes(prec), lay.tp
    b = (max(1, M.max_batch(cfg, g, prec, tp, prompt + out, 0.0, kv)) if open_batch else params["batch_size"])
    thr = thr if thr is not None else (b * lay.replicas / lat if lat else None)
    if thr is None:
        raise UserError("an llm-serve claim needs --throughput (generated tokens/s), --latency (s per token) "
                        "or --ttft (s to the first token)")
    results = store.results(workload=cls.name) if store is not None else []
    ceil = SE.ceiling(results, prec)
    # communication is left out of both bounds: an engine may overlap or shorten it (a floor, not a bound)
    bound = _times(M.upper_bound(cfg, g, prec, tp, b, prompt, out, kv), lay.replicas)
    credible = _times(M.request(cfg, g, prec, tp, b, prompt, out, ceil.decode, ceil.prefill, None, kv), lay.replicas)
    need = M.memory_per_gpu(cfg, prec, tp, b, prompt + out, kv)
    fpi = cls.flops(params)
    implied = thr / lay.gpus * fpi / 1e12
    bw_per_tok, peak = bound["bytes_per_step_per_gpu"] / b, g.peaks[W.COMPUTE[prec]]
    at = f"the largest batch that fits ({b}{' per copy' if lay.replicas > 1 else ''})" if open_batch else \
        f"batch {b}{' per copy' if lay.replicas > 1 else ''}"
    head = (f"{cfg.n_layers}-layer {params['hf_config'] or params['shape']} at {at}, {prompt}+{out} tokens, "
            f"{lay.text()}: weight and KV reads alone bound it to {bound['tokens_per_s']:,.0f} tokens/s at "
            f"{g.short}'s {g.memory_bandwidth_gbs:,.0f} GB/s and {peak:g} TFLOP/s, no communication "
            f"({bw_per_tok / 1e9:.2f} GB read per token per GPU)")
    v, reason = _serving_verdict(store, cls.name, head, g, thr, need, bound, credible, ceil)
    return {**_row(claim, g, prec, cls, params, lay, b), "throughput": thr, "latency": lat,
            "flops_per_item": fpi, "verdict": v, "implied_tflops": implied, "peak_tflops": peak,
            "share_of_peak": implied / peak, "bound_tokens_per_s": bound["tokens_per_s"],
            "credible_tokens_per_s": credible["tokens_per_s"], "reason": reason}


def _times(r: dict, replicas: int) -> dict:
    """One copy's request figures for ``replicas`` independent copies: tokens/s add up."""
    return {**r, "tokens_per_s": r["tokens_per_s"] * replicas}


def _row(claim: dict, g, prec: str, cls, params: dict, lay: Layout, batch: int) -> dict:
    """The fields every serving row of `check` carries."""
    return {"gpu": g.name, "workload": cls.name, "precision": claim["precision"], "executed": prec,
            "executed_as": f"{prec} weights" + ("" if W.COMPUTE[prec] == prec else f", {W.COMPUTE[prec]} arithmetic"),
            "batch_size": batch, "params": params, "gpus": lay.gpus, "replicas": lay.replicas,
            "tensor_parallel": lay.tp, "layout": lay.text(), "scaling": None, "ceiling": None,
            "source": claim.get("source", "")}


def _check_ttft(claim: dict, store, g, prec: str, cls, cfg, params: dict, lay: Layout) -> dict:
    """Seconds to the first token of ``batch`` prompts of prompt_len tokens on one copy (TP = gpus /
    replicas): the prefill bound at the dense peak, and at the best prefill MFU credibly reached."""
    ttft, b, prompt, tp = _num(claim, "ttft"), params["batch_size"], params["prompt_len"], lay.tp
    if _num(claim, "throughput") is not None or _num(claim, "latency") is not None:
        raise UserError("a TTFT claim (--ttft) is judged alone; give --throughput or --latency as another claim")
    results = store.results(workload=cls.name) if store is not None else []
    ceil = SE.ceiling(results, prec)
    bound = M.prefill_s(cfg, g, prec, tp, b, prompt, 1.0, 1.0, None)
    credible = M.prefill_s(cfg, g, prec, tp, b, prompt, ceil.prefill, ceil.decode, None)
    spread, spread_from = run_spread(store, cls.name)
    flops = b * prefill_flops(cfg, prompt)
    peak = g.peaks[W.COMPUTE[prec]]
    implied = flops / tp / ttft / 1e12
    need = M.memory_per_gpu(cfg, prec, tp, b, prompt, _kv_bytes(prec))
    head = (f"the prefill of {b} x {prompt} tokens of {params['hf_config'] or params['shape']} is "
            f"{flops / 1e12:,.1f} TFLOP; on {tp} {g.short}(s) at {peak:g} TFLOP/s and "
            f"{g.memory_bandwidth_gbs:,.0f} GB/s, no communication, it takes at least {bound * 1e3:,.1f} ms")
    if need > g.memory_gb * 1e9:
        v, reason = V.IMPOSSIBLE, (f"weights and KV need {need / 1e9:.0f} GB per GPU; the {g.short} has "
                                   f"{g.memory_gb:g} GB")
    elif ttft < bound * (1 - 1e-6):
        v, reason = V.IMPOSSIBLE, f"{head}; the claim is {bound / ttft:.2f}x faster than that"
    elif ttft < credible / (1 + spread):
        v, reason = V.IMPLAUSIBLE, (f"{head}; {credible * 1e3:,.1f} ms at the best prefill MFU credibly reached "
                                    f"{ceil.prefill:.0%} ({ceil.prefill_from}), widened by the run-to-run spread "
                                    f"{spread:.1%} ({spread_from})")
    else:
        v, reason = V.PLAUSIBLE, (f"{head}; {implied / peak:.0%} of the peak, within the {ceil.prefill:.0%} prefill "
                                  f"MFU credibly reached ({credible * 1e3:,.1f} ms)")
    return {**_row(claim, g, prec, cls, params, lay, b), "throughput": None, "latency": None, "ttft": ttft,
            "claim_text": f"TTFT {ttft * 1e3:,.4g} ms", "flops_per_item": flops / b, "verdict": v,
            "implied_tflops": implied, "peak_tflops": peak, "share_of_peak": implied / peak,
            "bound_ttft_s": bound, "credible_ttft_s": credible, "reason": reason}


def serving_precision(given) -> str:
    """The weights' precision a serving claim states (workloads/llm/precisions.py), or a UserError
    listing the ones the serving model knows."""
    prec = W.normalise(str(given))
    if prec is None:
        raise UserError(f"llm-serve claim precision {given!r}: the weights' precision is one of "
                        f"{', '.join(W.SERVING_PRECISIONS)}")
    return prec


def _serving_claim(claim: dict) -> tuple:
    """The claim's GPU, weight precision, workload class and resolved params, and whether its batch is open."""
    unused = [k for k in ("image_size", "steps", "scaling") if claim.get(k) not in (None, "")]
    if unused:
        raise UserError(f"llm-serve claim: {', '.join(unused)} mean nothing to a serving claim (give the model, "
                        "prompt_len, new_tokens, batch and --gpus, with --replicas for independent copies)")
    g = catalog.match(claim["gpu"])
    prec = serving_precision(claim.get("precision"))
    given = {k: claim[k] for k in SERVE_KEYS if claim.get(k) not in (None, "")}
    if claim.get("model") not in (None, "") and "hf_config" not in given:
        given.setdefault("shape", claim["model"])
    if claim.get("seq_len") not in (None, ""):
        given.setdefault("prompt_len", claim["seq_len"])
    open_batch = claim.get("batch_size") in (None, "")      # "the batch chosen by the engine"
    cls = registry.get(claim["workload"])   # judged by the serving model (check dispatches on its physics)
    try:
        params = cls.resolve_params({**given, "batch_size": 1 if open_batch else int(float(claim["batch_size"]))})
    except (TypeError, ValueError):
        raise UserError(f"llm-serve claim: bad parameters {given}") from None
    return g, prec, cls, params, open_batch


def _serving_verdict(store, workload: str, head: str, g, thr: float, need: float, bound: dict, credible: dict,
                     ceil) -> tuple[V, str]:
    spread, spread_from = run_spread(store, workload)
    if need > g.memory_gb * 1e9:
        return V.IMPOSSIBLE, (f"weights and KV need {need / 1e9:.0f} GB per GPU; the {g.short} has "
                              f"{g.memory_gb:g} GB (give --gpus N for tensor parallel)")
    if thr > bound["tokens_per_s"] * (1 + 1e-6):
        over = thr / bound["tokens_per_s"]          # 1.02x, not a rounded 1.0x, just above the bound
        return V.IMPOSSIBLE, f"{head}; the claim is {over:.{2 if over < 1.1 else 1}f}x that"
    if thr > credible["tokens_per_s"] * (1 + spread):
        return V.IMPLAUSIBLE, (f"{head}; above the {credible['tokens_per_s']:,.0f} reached at the best decode "
                               f"share {ceil.decode:.0%} ({ceil.decode_from}) and prefill MFU "
                               f"{ceil.prefill:.0%} ({ceil.prefill_from}), widened by the run-to-run "
                               f"spread {spread:.1%} ({spread_from})")
    return V.PLAUSIBLE, (f"{head}; within the {credible['tokens_per_s']:,.0f} reached at the best decode "
                         f"share {ceil.decode:.0%} and prefill MFU {ceil.prefill:.0%}")


# --- ratio claims ------------------------------------------------------------------------------

def _ratio_as_check_row(claim: dict, store) -> dict:
    """A ratio claim in `check --csv` (columns vs and ratio) as a row of check's table."""
    from gpuarena.analysis.physics.ratio import parse_range

    if claim.get("vs") in (None, "") or claim.get("ratio") in (None, ""):
        raise UserError("an llm-serve ratio claim needs both vs (the second GPU) and ratio (its tokens/s over vs's)")
    if any(claim.get(k) not in (None, "") for k in ("throughput", "latency", "ttft")):
        raise UserError("an llm-serve ratio claim states a ratio, not a throughput, latency or ttft")
    lo, hi = parse_range(claim["ratio"])
    r = check_serving_ratio(claim["gpu"], claim["vs"], lo, hi, claim, store)
    return {**r, "precision": claim.get("precision"), "batch_size": r["batch_size"], "params": {},
            "throughput": None, "latency": None, "scaling": None, "implied_tflops": None, "peak_tflops": None,
            "share_of_peak": None, "ceiling": None, "source": claim.get("source", ""),
            "claim_text": f"{claim['ratio']}x the {catalog.match(claim['vs']).short}"}


def _cannot_hold(cfg, cards, batches, prec: str, tp: int, context: int, kv: int) -> str:
    """Why one of the cards cannot hold its batch (weights + KV at the context), or ''."""
    for g, b in zip(cards, batches):
        need = M.memory_per_gpu(cfg, prec, tp, max(b, 1), context, kv)
        if b < 1 or need > g.memory_gb * 1e9:
            return (f"the {g.short} cannot serve it: {prec} weights and {max(b, 1)} sequence(s) of {context} tokens "
                    f"need {need / 1e9:,.0f} GB per GPU over {tp} GPU(s); it has {g.memory_gb:g} GB")
    return ""


def check_serving_ratio(gpu: str, vs: str, low: float, high: float, claim: dict, store=None) -> dict:
    """"gpu serves x times vs's tokens/s": the serving model's ratio at the claim's conditions (lengths,
    --gpus and --replicas, the same engine on both), at the claim's batch or, without one, each card at
    the largest batch it holds (max throughput); between its value at the physical bounds and at the
    credible shares, widened by the run-to-run spread."""
    if not 0 < low <= high:
        raise UserError("--ratio: a positive number or a range low-high")
    cls = registry.get(claim.get("workload") or judged.workloads("serving")[0])
    open_batch = claim.get("batch_size") in (None, "")
    given = {k: claim[k] for k in SERVE_KEYS if claim.get(k) not in (None, "")}
    if claim.get("model") not in (None, "") and "hf_config" not in given:
        given.setdefault("shape", claim["model"])
    params = cls.resolve_params({**given, "batch_size": 1 if open_batch else int(float(claim["batch_size"]))})
    cfg, lay = cls.config(params), layout(claim_gpus(claim), claim.get("replicas"))
    prec = serving_precision(claim.get("precision") or "bf16")
    kv, tp, prompt, out = _kv_bytes(prec), lay.tp, params["prompt_len"], params["new_tokens"]
    cards = catalog.match(gpu), catalog.match(vs)
    for g in cards:
        why = M.refusal(g, prec, cfg, tp)
        if why:
            raise UserError(f"ratio claim on {g.short}: {why}")
    ceil = SE.ceiling(store.results(workload=cls.name) if store is not None else [], prec)
    s, s_from = run_spread(store, cls.name)
    model = params["hf_config"] or params["shape"]
    base = {"kind": f"throughput ratio, {lay.text()} each", "workload": cls.name, "gpu": cards[0].name,
            "vs": cards[1].name, "precision": prec, "executed": prec, "claimed": low, "claimed_high": high, "spread": s,
            "spread_from": s_from, "gpus": lay.gpus, "replicas": lay.replicas, "tensor_parallel": tp,
            "layout": lay.text()}
    # the batch on each card: the claim's, or the largest each holds with none or 10% of memory kept back
    batches = {k: [params["batch_size"]] * 2 if not open_batch else
               [M.max_batch(cfg, g, prec, tp, prompt + out, k, kv) for g in cards] for k in KEPT_BACK}
    short = _cannot_hold(cfg, cards, batches[0.0], prec, tp, prompt + out, kv)
    if short:
        return {**base, "batch_size": None if open_batch else batches[0.0][0], "expected_low": None,
                "expected_high": None, "verdict": V.IMPOSSIBLE, "reason": f"{short} ({model})"}
    ratios, shown = [], []
    for k in (KEPT_BACK if open_batch else KEPT_BACK[:1]):
        ba, bb = batches[k]
        if min(ba, bb) < 1:
            continue            # with 10% kept back one card holds no sequence: only the 0% case counts
        for dec, pre in ((1.0, 1.0), (ceil.decode, ceil.prefill)):
            t = [M.request(cfg, g, prec, tp, b_, prompt, out, dec, pre, None, kv)["tokens_per_s"]
                 for g, b_ in zip(cards, (ba, bb))]
            ratios.append(t[0] / t[1])
        shown.append(f"batch {ba} vs {bb}" + (f" ({k:.0%} of memory kept back)" if open_batch else "")
                     + f": {ratios[-1]:.2f} credible, {ratios[-2]:.2f} at the bounds")
    lo, hi = min(ratios) / (1 + s), max(ratios) * (1 + s)
    verdict = V.PLAUSIBLE if low <= hi and high >= lo else V.IMPLAUSIBLE
    claimed = f"{low:.3f}" if high == low else f"{low:.3f}-{high:.3f}"
    at = "each at the largest batch its memory holds (max throughput)" if open_batch else f"batch {batches[0.0][0]}"
    return {**base, "batch_size": None if open_batch else batches[0.0][0], "expected_low": lo, "expected_high": hi,
            "verdict": verdict,
            "reason": (f"claimed {claimed}; the serving model at {prompt}+{out} tokens ({model}, {prec}, {lay.text()} "
                       f"each), {at}: " + "; ".join(shown) + f" (credible: decode share {ceil.decode:.0%}, prefill "
                       f"MFU {ceil.prefill:.0%}); widened by the run-to-run spread {s:.1%}: {lo:.3f}-{hi:.3f}")}
