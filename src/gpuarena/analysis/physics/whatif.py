"""An interconnect model for data-parallel training.

step(N) = compute + exposed communication
communication = ring all-reduce of the gradients = 2 (N-1)/N x bytes / busbw
exposed = (1 - overlap) x communication, never less than communication - compute (the compute is
all there is to hide it behind: a step is never shorter than its own all-reduce)
scaling efficiency = compute / step(N)

- Gradient bytes: parameter count x 4 (DDP all-reduces FP32 gradients unless a
  compression hook is set).  ResNet-50: 25.557M parameters (torchvision
  resnet50, checked in tests); BERT-Large: 336.2M (BertForPreTraining from the
  bert-large-uncased config as bert-large-train builds it, the MLM decoder tied
  to the word embeddings; checked in tests).
- busbw: measured (`allreduce` results in the database on that GPU, at the GPU
  count asked for or the nearest measured, interpolated at the size of DDP's
  messages: its 25 MiB buckets, not the 1-4 GiB where busbw peaks; on 2 H200s
  that is 224 GB/s against 345 at 4 GiB) or derived from the catalog (NVLink or
  PCIe x NVLINK_EFF: interconnect.py); beyond one node (NODE_GPUS) given or measured across nodes.
- overlap: measured from a multi-GPU `ddp-train` result of the same model and
  variant (see measured_overlap) or DEFAULT_OVERLAP = 0: no overlap, so the
  prediction is a lower bound on efficiency (DDP's bucketed all-reduce overlaps
  part of it with backward).
- compute: per-step time of the single-GPU throughput (measured, else
  published) at the given batch size.
"""

from __future__ import annotations

import math
from typing import Callable, Optional, Union

from pydantic import BaseModel

from gpuarena.analysis.physics import judged
from gpuarena.analysis.rows import common as R
from gpuarena.analysis.physics.interconnect import node_busbw, ring_allreduce_s
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry
from gpuarena.store.result import Result

GRAD_BYTES_PER_PARAM = 4
# ddp-train's communication hooks all-reduce 2-byte gradients
COMPRESSED_VARIANTS = ("fp16-compress", "bf16-compress")
DEFAULT_OVERLAP = 0.0
DDP_BUCKET_MB = 25.0   # DistributedDataParallel's bucket_cap_mb default: the size of each all-reduce


Num = Union[int, float]          # a figure keeps its type in the JSON


class WhatIfRow(BaseModel):
    """One GPU count: the ring all-reduce, what of it the compute cannot hide, the step and its efficiency."""

    n: int
    busbw_gbs: Num
    comm_s: Num
    exposed_s: Num
    step_s: Num
    efficiency: Num                            # against the model's own 1-GPU step (efficiency_baseline)
    throughput: Num                            # items/s over the n GPUs
    efficiency_vs_plain: Optional[Num] = None  # against the plain single-GPU step, where one is known


class WhatIf(BaseModel):
    """`gpuarena whatif`: predicted data-parallel scaling of one workload on N x one GPU, with where the
    compute time, the bus bandwidth and the overlap came from."""

    gpu: str
    workload: str
    batch_size: int
    batch_from: str
    accum_steps: int
    efficiency_baseline: str
    plain_throughput: Optional[Num] = None
    vs_plain_missing: str
    grad_bytes: Num
    message_bytes: Num
    compute_s: Num
    compute_from: str
    busbw_gbs: Num
    busbw_from: str
    overlap: Num
    overlap_from: str
    rows: list[WhatIfRow]


def gradient_sizes() -> dict[str, int]:
    """Parameters of each training workload at its default size, from the workload class."""
    out = {}
    for name, cls in registry.classes().items():
        if cls.trains and not cls.multi_gpu:
            n = cls.param_count(cls.resolve_params({}))
            if n:
                out[name] = n
    return out


def measured_overlap(store, gpu: str, model: str | None, variant: str | None,
                     comm_s: Callable[[int], float]) -> tuple[float, str] | None:
    """The effective share of the all-reduce hidden behind backward, from the newest ddp-train result at
    N >= 2 (same model and variant) and the N = 1 result of its run:
    1 - (step time at N - step time at 1) / modelled all-reduce at N, step times from the throughputs.
    comm_s(N): the modelled all-reduce at the measured N, whatever counts the caller asks a prediction for.

    Not from the profiler's NCCL kernel time (a kernel is resident while it waits for its peer: 156 ms
    of kernels in a 129 ms BERT-Large step on 2 H200s), and not from the no_sync() difference alone:
    the hidden part is not free (NCCL's kernels take SMs and memory bandwidth from the backward pass),
    and only the throughputs carry that cost."""
    if store is None:
        return None
    rows = [r for r in store.results(status="ok") if judged.judges("data-parallel", r.workload)
            and R.gpu_of(r) == gpu
            and (model is None or r.params.get("model") == model)
            and r.variant == (variant or "seed") and r.throughput_median]
    for r in reversed(rows):
        n = r.gpus
        one = [o for o in rows if o.run_id == r.run_id and o.gpus == 1
               and o.params == r.params]
        if n < 2 or not one or not comm_s(n):
            continue
        items = (_batch_size(r) or 1) * (r.extra.accum_steps or 1)
        step_1 = items / one[-1].throughput_median
        step_n = items * n / r.throughput_median
        extra = max(0.0, step_n - step_1)
        ov = min(1.0, max(0.0, 1 - extra / comm_s(n)))
        return ov, (f"measured ddp-train {r.variant} ({n} GPUs): step {extra * 1e3:.2f} ms longer than "
                    f"on 1, of {comm_s(n) * 1e3:.2f} ms modelled all-reduce")
    return None


def _batch_size(r: Result) -> int | None:
    """The per-GPU batch of a result (ddp-train keeps its model's in extra.inner_params)."""
    return (r.params.get("batch_size")
            or (r.extra.inner_params or {}).get("batch_size"))


def single_gpu_throughput(store, workload: str, gpu: str, batch_size: int | None,
                          model: str | None = None, variant: str | None = None) -> dict | None:
    if store is None:
        return None
    best = None
    for r in store.results(workload=workload, status="ok"):
        if R.gpu_of(r) != gpu or r.gpus != 1 or not r.throughput_median:
            continue
        if model and r.params.get("model") != model:
            continue
        if variant and r.variant != variant:
            continue
        bs = _batch_size(r)
        if batch_size and bs != batch_size:
            continue
        rank = (r.source != "published", r.id or 0)
        if best is None or rank > best[0]:
            best = (rank, r)
    return best[1] if best else None


def grad_model_workload(workload: str, ddp_model: str | None) -> str:
    return registry.ddp_models()[ddp_model].name if ddp_model else workload


def _default_batch(workload: str) -> int:
    return int(registry.get(workload).resolve_params({})["batch_size"])


def compressed(variant: str | None, ddp_model: str | None) -> bool:
    """Whether a (composed) DDP variant all-reduces 2-byte gradients, read through the variant parser."""
    if not variant or not ddp_model:
        return False
    wrapper = registry.get(judged.workloads("data-parallel")[0])
    return bool(wrapper.parse_variant(variant) & set(COMPRESSED_VARIANTS))


def _ddp_model(workload: str, model: str | None, counts: dict[str, int]) -> str | None:
    """The model a data-parallel wrapper trains (its gradients are what is all-reduced); None for a
    plain training workload, refused when whatif does not know its gradient size."""
    if judged.judges("data-parallel", workload):   # the model's gradients, measured through DDP at N = 1
        ddp_model = model or registry.get(workload).resolve_params({})["model"]   # the wrapper's default
        if ddp_model not in registry.ddp_models() or registry.ddp_models()[ddp_model].name not in counts:
            raise UserError(f"--model {ddp_model!r}: whatif knows "
                            + ", ".join(k for k, c in registry.ddp_models().items() if c.name in counts))
        return ddp_model
    if workload not in counts:
        raise UserError(f"whatif knows the gradient size of {', '.join(counts)} and ddp-train; "
                        f"not {workload!r}")
    return None


def _check_inputs(ns: list[int], busbw, overlap, batch_size, bucket_mb) -> None:
    if not ns or any(n < 1 or n > 100_000 for n in ns):
        raise UserError("--n: GPU counts must be between 1 and 100000")
    if busbw is not None and not 0 < busbw < 100_000:
        raise UserError(f"--busbw {busbw}: must be a positive GB/s figure below 100000")
    if overlap is not None and not 0 <= overlap <= 1:
        raise UserError(f"--overlap {overlap}: must be between 0 and 1")
    if batch_size is not None and not (isinstance(batch_size, int) and batch_size >= 1):
        raise UserError(f"--batch-size {batch_size}: must be a whole number >= 1")
    if not 0 < bucket_mb <= 1e6:
        raise UserError(f"--bucket-mb {bucket_mb}: must be a positive size in MiB")


def _compute(store, workload: str, g, batch_size, throughput, ddp_model, variant) -> dict:
    """One GPU's step: given (--throughput, the workload's default batch) or the stored result's.
    {thr, bs, src, batch_from, accum, model_variant}; accum: ddp-train no-sync micro-batches per all-reduce."""
    if throughput is not None:
        if not (math.isfinite(throughput) and throughput > 0):
            raise UserError(f"--throughput {throughput}: must be a finite positive number")
        batch_from = "given"
        if batch_size is None:
            batch_size, batch_from = _default_batch(grad_model_workload(workload, ddp_model)), "the workload's default"
        return {"thr": throughput, "bs": batch_size, "src": "given", "batch_from": batch_from, "accum": 1,
                "model_variant": None}
    r = single_gpu_throughput(store, workload, g.name, batch_size, ddp_model,
                              (variant or "seed") if ddp_model else variant)
    if r is None:
        raise UserError(f"no single-GPU {workload} result on {g.name}"
                        + (f" at batch size {batch_size}" if batch_size else "")
                        + "; pass --throughput (items/s on one GPU) or import published results")
    thr = r.throughput_median
    return {"thr": thr, "bs": _batch_size(r) or batch_size or 1, "batch_from": "the stored result",
            "accum": int(r.extra.accum_steps or 1),
            "model_variant": r.params.get("model_variant"),
            "src": f"{r.source} {thr:,.1f} {r.unit}" + (f" ({r.origin})" if r.origin else "")}


def predict(workload: str, gpu: str, ns: list[int], store=None, busbw: float | None = None,
            overlap: float | None = None, batch_size: int | None = None,
            throughput: float | None = None, model: str | None = None, variant: str | None = None,
            bucket_mb: float = DDP_BUCKET_MB) -> WhatIf:
    """Predicted scaling for N GPUs: a WhatIf, one WhatIfRow per GPU count."""
    counts = gradient_sizes()
    ddp_model = _ddp_model(workload, model, counts)
    g = catalog.match(gpu)
    _check_inputs(ns, busbw, overlap, batch_size, bucket_mb)
    c = _compute(store, workload, g, batch_size, throughput, ddp_model, variant)
    bs, accum = c["bs"], c["accum"]
    compute = bs * accum / c["thr"]
    grad_workload = grad_model_workload(workload, ddp_model)
    shrink = 0.5 if compressed(variant, ddp_model) else 1.0    # a 2-byte hook sends half the bytes
    grad_bytes = counts[grad_workload] * GRAD_BYTES_PER_PARAM * shrink
    # DDP all-reduces buckets of bucket_mb of FP32 gradients, one after another: the whole transfer
    # moves at the bus bandwidth of that message size, not of 1 GB.
    message = min(bucket_mb * 2**20 * shrink, grad_bytes)
    def bw(n: int) -> tuple[float, str]:
        return ((busbw, "given") if busbw is not None else
                node_busbw(store, g, n, message))

    def comm_measured(n: int) -> float:
        """The all-reduce of the system that measured the overlap: its own busbw, whatever --busbw says
        of the system asked about (a given busbw would otherwise rescale the overlap to cancel itself)."""
        try:
            return ring_allreduce_s(grad_bytes, n, node_busbw(store, g, n, message)[0])
        except UserError:
            return 0.0

    bws = {n: bw(n) for n in ns}
    comm = {n: ring_allreduce_s(grad_bytes, n, bws[n][0]) for n in ns}
    if overlap is not None:
        ov, ov_from = overlap, "given"
    else:
        model_name = ddp_model or registry.get(grad_workload).ddp_name
        ov, ov_from = (measured_overlap(store, g.name, model_name, variant, comm_measured)
                       or (DEFAULT_OVERLAP, "default (no overlap: a lower bound)"))
    plain, plain_missing = _plain(store, ddp_model, grad_workload, g, bs, c)
    rows = []
    for n in ns:
        exposed = max((1 - ov) * comm[n], comm[n] - compute)   # only the step's compute can hide the wire
        step = compute + exposed
        total = n * bs * accum / step
        rows.append(WhatIfRow(n=n, busbw_gbs=bws[n][0], comm_s=comm[n], exposed_s=exposed, step_s=step,
                              efficiency=compute / step, throughput=total,
                              efficiency_vs_plain=total / (n * plain) if plain else None))
    return WhatIf(gpu=g.name, workload=workload + (f" ({ddp_model}, {variant or 'seed'})" if ddp_model else ""),
                  batch_size=bs, batch_from=c["batch_from"], accum_steps=accum,
                  efficiency_baseline="DDP at 1 GPU" if ddp_model else "the plain single-GPU step",
                  plain_throughput=plain, vs_plain_missing=plain_missing, grad_bytes=grad_bytes,
                  message_bytes=message, compute_s=compute, compute_from=c["src"], busbw_gbs=bws[ns[-1]][0],
                  busbw_from="; ".join(sorted({f for _, f in bws.values()})), overlap=ov, overlap_from=ov_from,
                  rows=rows)


def _plain(store, ddp_model, grad_workload: str, g, bs: int, c: dict) -> tuple[float | None, str]:
    """Two baselines: DDP's own step at 1 GPU (what ddp-train measures) and the plain single-GPU step of
    the model (the articles' "linear coefficient").  Without DDP in the loop they are the same step.
    (throughput, why there is none).  no-sync steps the optimizer once per accum micro-batches and the
    plain step every batch, so against it no-sync "scales" above 1 (1.02 at 2 H200s, BERT-Large) from the
    optimizer steps it skips, not from the GPUs: no plain baseline then."""
    if c["accum"] > 1:
        return None, "not like for like"
    if ddp_model and store is not None:
        pr = single_gpu_throughput(store, grad_workload, g.name, bs, None, c["model_variant"])
        return (pr.throughput_median if pr else None), "not measured"
    return (None, "not measured") if ddp_model else (c["thr"], "")
