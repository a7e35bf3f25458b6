"""The physics model's expected figure of a result that has no like-for-like reference: each workload's
physics (the class's ``physics``, registered once in analysis/physics/models.py) asked through its current
public function.

- roofline (ResNet-50, BERT, SD): the best attainment credibly reached on the workload, precision class
  and generation (analysis/physics/limits.py ``limit``: data/ceilings.csv and the measured evidence) on this
  card's roofline at the result's settings; a precision without evidence (FP8, INT8) borrows its model's
  BF16 figure, unverified;
- serving (llm-serve): the serving model (analysis/physics/serving_model.py ``request``) at the result's batch,
  prompt and output, its decode share and prefill MFU those of the same engine recipe (variant, decode
  attention, prefill) in other runs or at other batches, else the best in the database, else the published
  defaults (gpt-fast);
- endpoint (endpoint-serve): the same serving model at the measured concurrency as the batch, the model's
  shape read from the served model's name, BF16 weights assumed (said);
- decoder-training (llm-train): the training model (analysis/physics/llm_plan.py ``step_time``) in the result's
  layout (none, FSDP, tensor parallel) at the compute efficiency one GPU reaches elsewhere in the database
  (llm_advice.compute_efficiency), communication added;
- data-parallel (ddp-train): one GPU's step of the wrapped model (its 1-rank ddp-train of the same setting,
  else the wrapped workload measured on this GPU) x N x the interconnect model's efficiency
  (analysis/physics/whatif.py ``predict``: ring all-reduce of the gradients over the catalog's bus bandwidth).

Each returns {"value", "band", "how"} or None; the band is projection.DEFAULT_BAND (the deployed path's
held-out error widened) unless the model has its own.  These figures are other code's or a model's:
context for "is my number normal?", never grounds for a below-expected flag (analysis/verbs/expected.py).
"""

from __future__ import annotations

import math

from gpuarena.analysis.rows import precision as P
from gpuarena.analysis.physics.expected_refs import request_of
from gpuarena.analysis.physics.projection import DEFAULT_BAND
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.store.flags import diverged
from gpuarena.store.result import Result
from gpuarena.workloads import registry

UNVERIFIED = 0.10       # a figure carried from another precision: the band widened


def _others(r: Result, pool: list[Result]) -> list[Result]:
    """The pool without r's own run (a model calibrated on the result itself would only agree with it) and
    without diverged results (a NaN loss runs at any speed: never evidence)."""
    mine = r.extra.origin_run_id or r.run_id
    return [q for q in pool if ((q.extra.origin_run_id or q.run_id) != mine or q.run_id is None)
            and not diverged(q)]


def settings_of(workload: str, params: dict) -> dict:
    """The workload's resolved parameters from a result's (keys the workload does not take dropped)."""
    cls = registry.get(workload)
    return cls.resolve_params({k: v for k, v in params.items() if k in cls.param_map()})


_ATTAINED: dict[tuple, tuple[float, str] | None] = {}     # per result: a fleet's pool is read once per result


def _attainment(q: Result) -> tuple[float, str] | None:
    """(q's attainment of its own roofline, its precision class) for a measured single-GPU result."""
    key = (q.id, q.run_id, q.workload, q.device_name, q.throughput_median)
    if key not in _ATTAINED:
        if len(_ATTAINED) > 100_000:
            _ATTAINED.clear()
        _ATTAINED[key] = _attained(q)
    return _ATTAINED[key]


def _attained(q: Result) -> tuple[float, str] | None:
    from gpuarena.analysis.physics.roofline import precision_class, roof
    from gpuarena.analysis.rows.common import gpu_of

    g, request = catalog.find(gpu_of(q)), request_of(q)
    if g is None or request is None or q.gpus != 1 or q.source == "published" or q.size == "tiny":
        return None
    try:
        rf = roof(q.workload, g, request, settings_of(q.workload, q.params))
    except (UserError, KeyError, ValueError, TypeError):
        return None
    att = rf.attainment(q.throughput_median)
    return (att, precision_class(rf.executed)) if 0 < att <= 1 else None


def best_attainment(r: Result, gpu: catalog.GPU, request: str, params: dict,
                    pool: list[Result]) -> tuple[float, str] | None:
    """(the best attainment of the workload's roofline at the request's precision class, where it comes
    from): the best the database's other runs measured at the same settings (batch, sizes) on this GPU
    generation, else the published evidence (physics.limit: data/ceilings.csv, borrowed from another
    generation where this one has none)."""
    from gpuarena.analysis.physics import limits as X
    from gpuarena.analysis.physics.roofline import precision_class
    from gpuarena.analysis.rows.common import gpu_of

    try:
        lim = X.limit(r.workload, gpu, request, params)
    except (UserError, KeyError, ValueError, TypeError):
        return None
    cls, arch = precision_class(lim.roof.executed), P.arch_of(gpu)
    mine = _conditions(r.params)
    measured = [(a[0], q) for q in _others(r, pool) if q.workload == r.workload and q.status == "ok"
                and q.throughput_median and _arch(gpu_of(q)) == arch and (a := _attainment(q)) and a[1] == cls]
    same = [x for x in measured if _conditions(x[1].params) == mine]
    if same:
        att, q = max(same, key=lambda x: x[0])
        return att, (f"the best this database measured at {cls} at these settings in another run "
                     f"({q.variant} on {catalog.match(gpu_of(q)).short}, run {q.run_id})")
    if lim.ceiling is not None:
        e = lim.ceiling.best
        where = f"{e.generation.capitalize()} ({catalog.match(e.gpu).short}, {e.engine}: {e.source})"
        itself = e.gpu == gpu.name and abs(e.throughput / r.throughput_median - 1) < 0.005
        return e.attainment, (f"the best credibly reached on {where}"
                              + ("; borrowed from another generation" if lim.ceiling.borrowed else "")
                              + ("; that evidence is this figure" if itself else ""))
    if measured:       # other settings only: the nearest batch's best
        batch = r.params.get("batch_size") or 1
        near = min(measured, key=lambda x: (abs(math.log((x[1].params.get("batch_size") or 1) / batch)), -x[0]))
        att, q = near
        return att, (f"the best this database measured at {cls} at batch {q.params.get('batch_size')} "
                     f"(none at these settings: {q.variant}, run {q.run_id})")
    return None


def _arch(name: str) -> str | None:
    g = catalog.find(name)
    return P.arch_of(g) if g is not None else None


def _conditions(params: dict) -> tuple:
    """The settings a roofline depends on (roofline.CONDITIONS: batch, sequence length, image size, steps)."""
    from gpuarena.analysis.physics.roofline import CONDITIONS

    return tuple(params.get(k) for k in CONDITIONS.values())


def roofline(r: Result, gpu: catalog.GPU, pool: list[Result]) -> dict | None:
    """The best attainment at the result's precision class (else a tensor-core class's, unverified) on this
    card's roofline at the result's settings and precision."""
    from gpuarena.analysis.physics.roofline import roof

    request = request_of(r)
    try:
        params = settings_of(r.workload, r.params)
        rf = roof(r.workload, gpu, request or "", params)
    except (UserError, KeyError, ValueError, TypeError):
        return None
    for cand in dict.fromkeys((request, "bf16", "tf32", "fp16")):
        found = best_attainment(r, gpu, cand, params, pool)
        if found:
            break
    else:
        return None
    att, where = found
    carried = cand != request
    how = (f"physics: {att:.0%} of the {gpu.short}'s {rf.bound_by}-bound roofline, {where}"
           + (f"; unverified: no {request} evidence, the {cand} attainment carried" if carried else ""))
    return {"value": min(rf.peak_throughput, att / rf.time), "band": DEFAULT_BAND + (UNVERIFIED if carried else 0),
            "how": how}


def _serving(cfg, gpu: catalog.GPU, prec: str, batch: int, prompt: int, output: int, pool: list[Result],
             what: str, decode_pool: list[Result] | None = None) -> dict | None:
    """The serving model's tokens/s; the decode share from ``decode_pool`` where given (the same recipe),
    the prefill MFU the best of ``pool`` (a batch-1 prefill says little of a batch-64 one)."""
    from dataclasses import replace

    from gpuarena.analysis.physics import serving_model as SM

    if SM.refusal(gpu, prec, cfg) or not (batch and prompt and output):
        return None
    sh = SM.shares(pool, prec)
    if decode_pool:
        dec = SM.shares(decode_pool, prec)
        sh = replace(sh, decode=dec.decode, decode_from=dec.decode_from, origin_gpu=dec.origin_gpu)
    est = SM.request(cfg, gpu, prec, 1, int(batch), int(prompt), int(output), sh.decode, sh.prefill)
    how = (f"serving model: {what} batch {batch}, {prompt} in / {output} out, decode at {sh.decode:.0%} of "
           f"{gpu.memory_bandwidth_gbs:,.0f} GB/s ({sh.decode_from}), prefill at {sh.prefill:.0%} of peak "
           f"({sh.prefill_from})")
    return {"value": est["tokens_per_s"], "band": DEFAULT_BAND, "how": how}


def serving(r: Result, gpu: catalog.GPU, pool: list[Result]) -> dict | None:
    from gpuarena.analysis.physics import serving_model as SM
    from gpuarena.workloads.llm.shapes import resolve_shape

    p = r.params
    try:
        cfg = resolve_shape(p.get("shape") or "", p.get("hf_config") or "")
    except UserError:
        return None
    batch = r.extra.batch or p.get("batch_size")
    others = _others(r, pool)
    recipe = [q for q in others if q.workload == r.workload and q.variant == r.variant
              and all(q.params.get(k) == p.get(k) for k in ("decode_attention", "prefill"))]
    prec = SM.weight_precision(r)
    mine = SM.measured_bandwidth_share(recipe, prec)     # the same engine recipe at other batches or runs
    what = "the same recipe's decode share, " if mine else "the best shares stored, "
    return _serving(cfg, gpu, prec, batch, p.get("prompt_len"), p.get("new_tokens"), others, what,
                    recipe if mine else None)


def endpoint(r: Result, gpu: catalog.GPU, pool: list[Result]) -> dict | None:
    from gpuarena.workloads.llm.shapes import SHAPES

    p = r.params
    name = str(p.get("model") or r.extra.model or "").rstrip("/").rsplit("/", 1)[-1].lower()
    shape = max((s for s in SHAPES if s != "tiny" and name.endswith(s)), key=len, default=None)
    if shape is None or p.get("prompts_file"):
        return None
    out = _serving(SHAPES[shape], gpu, "bf16", r.extra.concurrency or p.get("concurrency"), p.get("prompt_len"),
                   p.get("output_len"), _others(r, pool),
                   f"{shape} (read from the served model's name, BF16 weights assumed), concurrency as")
    return out and {**out, "how": out["how"] + f"; a served engine ({r.extra.engine or 'unnamed'}) batches "
                                               "continuously: context"}


def decoder_training(r: Result, gpu: catalog.GPU, pool: list[Result]) -> dict | None:
    from gpuarena.analysis.physics import llm_plan as LP
    from gpuarena.analysis.physics.llm_advice import compute_efficiency
    from gpuarena.workloads.llm.shapes import resolve_shape

    p, n = r.params, int(r.gpus or 1)
    try:
        cfg = resolve_shape(p.get("shape") or "", p.get("hf_config") or "")
    except UserError:
        return None
    prec = "fp8" if "fp8" in r.variant.split("+") else "bf16"
    others = [q for q in _others(r, pool) if q.workload == r.workload]
    eff, eff_from = compute_efficiency(others, prec)
    note, band, peak_prec = "", DEFAULT_BAND, prec
    if prec == "fp8" and not any(q.precision == "fp8" for q in others):   # FP8 speeds up the GEMMs only
        eff, eff_from = compute_efficiency(others, "bf16")
        note, band, peak_prec = "; unverified: no FP8 evidence, the BF16 efficiency at the BF16 peak", \
            DEFAULT_BAND + UNVERIFIED, "bf16"
    par, batch, seq = p.get("parallel") or "none", int(p.get("batch_size") or 1), int(p.get("seq_len") or 2048)
    tp = n if par == "tp" else 1
    dp = n // tp
    lay = LP.Layout(n=n, tp=tp, pp=1, dp=dp, micro_batch=batch, global_batch=batch * dp, seq_len=seq,
                    checkpointing=False, zero3=par == "fsdp")
    try:
        t = LP.step_time(cfg, lay, gpu, None, peak_prec, eff=eff)
    except UserError:
        return None
    how = (f"training model: {par} over {n} GPU(s), compute at {eff:.0%} of the {peak_prec.upper()} peak "
           f"({eff_from}), communication {t['tp_comm_s'] + t['dp_comm_s']:.3f} s of a {t['step_s']:.3f} s step"
           + note)
    return {"value": t["tokens_per_step"] / t["step_s"], "band": band, "how": how}


def data_parallel(r: Result, gpu: catalog.GPU, pool: list[Result]) -> dict | None:
    from gpuarena.analysis.physics import whatif as W
    from gpuarena.analysis.rows.common import gpu_of

    p, n = r.params, int(r.gpus or 1)
    inner = registry.ddp_models().get(p.get("model"))
    if inner is None:
        return None
    bs = int(p.get("batch_size") or inner.resolve_params({})["batch_size"])
    on_gpu = [q for q in pool if q.status == "ok" and q.size != "tiny" and q.throughput_median and not diverged(q)
              and q.gpus == 1 and getattr(catalog.find(gpu_of(q)), "name", None) == gpu.name]
    one = [q for q in on_gpu if q.workload == r.workload and q.variant == r.variant and q.params == p
           and (n > 1 or q is not r) and q.id != r.id]
    if one:
        thr, src = max(q.throughput_median for q in one), f"its 1-GPU ddp-train ({r.variant})"
    else:
        plain = [q for q in on_gpu if q.workload == inner.name and q.variant == p.get("model_variant")
                 and q.params.get("batch_size") == bs]
        if not plain:
            return None
        thr, src = max(q.throughput_median for q in plain), f"{inner.name} {p.get('model_variant')} at batch {bs}"
    if n == 1:
        return {"value": thr, "band": DEFAULT_BAND, "how": f"data-parallel model at 1 GPU: one step of {src}"}
    try:
        pred = W.predict(r.workload, gpu.name, [n], None, throughput=thr, batch_size=bs, model=p.get("model"),
                         variant=r.variant, bucket_mb=float(p.get("bucket_cap_mb") or W.DDP_BUCKET_MB))
    except UserError:
        return None
    row = pred.rows[0]
    how = (f"data-parallel model: {n} x {thr:,.0f} {r.unit or 'items/s'} ({src}) x efficiency "
           f"{row.efficiency:.3f} (ring all-reduce of {pred.grad_bytes / 1e6:,.0f} MB at "
           f"{row.busbw_gbs:,.0f} GB/s, {pred.busbw_from}; overlap {pred.overlap:.0%})")
    return {"value": n * thr * row.efficiency, "band": DEFAULT_BAND, "how": how}
