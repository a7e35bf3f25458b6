"""An interconnect model for data-parallel training.

step(N) = compute + exposed communication
communication = ring all-reduce of the gradients = 2 (N-1)/N x bytes / busbw
exposed = (1 - overlap) x communication
scaling efficiency = compute / step(N)

- Gradient bytes: parameter count x 4 (DDP all-reduces FP32 gradients unless a
  compression hook is set).  ResNet-50: 25.557M parameters (torchvision
  resnet50, checked in tests); BERT-Large: ~335M (BertForPreTraining, the
  figure usually quoted; 24 layers x 12.6M + embeddings and heads).
- busbw: measured (`allreduce` results in the database, the largest message on
  that GPU) or derived from the catalog: NVIDIA's NVLink figure is the total of
  both directions, and nccl-tests all-reduce busbw reaches about 80% of one
  direction (e.g. ~230-240 GB/s of A100's 300 GB/s), so busbw = NVLINK_EFF x
  nvlink / 2; without NVLink, PCIe x16 per direction (16/32/64 GB/s for gen
  3/4/5) x the same factor.
- overlap: measured from `ddp-train` results (1 - exposed_comm_s / comm_s) or
  DEFAULT_OVERLAP = 0: no overlap, so the prediction is a lower bound on
  efficiency (DDP's bucketed all-reduce overlaps part of it with backward).
- compute: per-step time of the single-GPU throughput (measured, else
  published) at the given batch size.
"""

from __future__ import annotations

from gpuarena.analysis import rows as R
from gpuarena.analysis.tables import render as _render
from gpuarena.data import catalog
from gpuarena.errors import UserError

PARAM_COUNTS = {"resnet50-train": 25_557_032, "bert-large-train": 335_000_000}
GRAD_BYTES_PER_PARAM = 4
# ddp-train's communication hooks all-reduce 2-byte gradients
COMPRESSED_VARIANTS = ("fp16-compress", "bf16-compress")
NVLINK_EFF = 0.8
PCIE_PER_DIRECTION_GBS = {3: 16.0, 4: 32.0, 5: 64.0}
DEFAULT_OVERLAP = 0.0


def ring_allreduce_s(nbytes: float, n: int, busbw_gbs: float) -> float:
    """Time of a ring all-reduce: 2 (n-1)/n x bytes / busbw (nccl-tests' busbw definition)."""
    if n <= 1:
        return 0.0
    return 2 * (n - 1) / n * nbytes / (busbw_gbs * 1e9)


def catalog_busbw(g: catalog.GPU) -> tuple[float, str]:
    if g.nvlink_gbs:
        return NVLINK_EFF * g.nvlink_gbs / 2, f"catalog NVLink {g.nvlink_gbs:g} GB/s / 2 x {NVLINK_EFF}"
    gen = int(g.pcie_gen or 4)
    bw = PCIE_PER_DIRECTION_GBS.get(gen, 32.0)
    return NVLINK_EFF * bw, f"catalog PCIe gen{gen} x16 {bw:g} GB/s per direction x {NVLINK_EFF}"


def _extra_num(extra: dict, *names) -> float | None:
    for k in names:
        v = (extra or {}).get(k)
        if isinstance(v, (int, float)) and v > 0:
            return float(v)
    return None


def measured_busbw(store, gpu: str) -> tuple[float, str] | None:
    if store is None:
        return None
    best = None
    for r in store.results(workload="allreduce", status="ok"):
        if R.gpu_of(r) != gpu:
            continue
        bw = _extra_num(r.get("extra") or {}, "busbw_gbs", "busbw_GBps", "busbw")
        size = _extra_num(r.get("extra") or {}, "bytes", "size_bytes") or (r.get("params") or {}).get("size_mb", 0)
        if bw and (best is None or size >= best[1]):
            best = (bw, size, r.get("gpus"))
    return (best[0], f"measured allreduce ({best[2]} GPUs)") if best else None


def measured_overlap(store, gpu: str, model: str | None = None) -> tuple[float, str] | None:
    """1 - exposed / total communication of the newest multi-GPU ddp-train result (of that model)."""
    if store is None:
        return None
    for r in reversed(store.results(workload="ddp-train", status="ok")):
        if R.gpu_of(r) != gpu or (r.get("gpus") or 1) < 2:
            continue
        if model and (r.get("params") or {}).get("model") != model:
            continue
        ex = r.get("extra") or {}
        comm, exposed = _extra_num(ex, "comm_total_s"), ex.get("comm_exposed_s")
        if comm and isinstance(exposed, (int, float)) and exposed >= 0:
            return max(0.0, 1 - exposed / comm), f"measured ddp-train {r['variant']} ({r.get('gpus')} GPUs)"
    return None


def _batch_size(r: dict) -> int | None:
    """The per-GPU batch of a result (ddp-train keeps its model's in extra.inner_params)."""
    return ((r.get("params") or {}).get("batch_size")
            or ((r.get("extra") or {}).get("inner_params") or {}).get("batch_size"))


def single_gpu_throughput(store, workload: str, gpu: str, batch_size: int | None,
                          model: str | None = None, variant: str | None = None) -> dict | None:
    if store is None:
        return None
    best = None
    for r in store.results(workload=workload, status="ok"):
        if R.gpu_of(r) != gpu or (r.get("gpus") or 1) != 1 or not r.get("throughput_median"):
            continue
        if model and (r.get("params") or {}).get("model") != model:
            continue
        if variant and r.get("variant") != variant:
            continue
        bs = _batch_size(r)
        if batch_size and bs != batch_size:
            continue
        rank = (r.get("source") != "published", r.get("id") or 0)
        if best is None or rank > best[0]:
            best = (rank, r)
    return best[1] if best else None


def predict(workload: str, gpu: str, ns: list[int], store=None, busbw: float | None = None,
            overlap: float | None = None, batch_size: int | None = None,
            throughput: float | None = None, model: str | None = None, variant: str | None = None) -> dict:
    """Predicted scaling for N GPUs.

    Returns {"gpu", "workload", "batch_size", "grad_bytes", "compute_s", "compute_from",
             "busbw_gbs", "busbw_from", "overlap", "overlap_from",
             "rows": [{n, comm_s, exposed_s, step_s, efficiency, throughput}]}.
    """
    ddp_model = None
    if workload == "ddp-train":          # the model's gradients, measured through DDP at N = 1
        ddp_model = model or "resnet50"
        if f"{ddp_model}-train" not in PARAM_COUNTS:
            raise UserError(f"--model {ddp_model!r}: whatif knows "
                            + ", ".join(k.removesuffix("-train") for k in PARAM_COUNTS))
    elif workload not in PARAM_COUNTS:
        raise UserError(f"whatif knows the gradient size of {', '.join(PARAM_COUNTS)} and ddp-train; "
                        f"not {workload!r}")
    g = catalog.match(gpu)
    if not ns or any(n < 1 or n > 100_000 for n in ns):
        raise UserError("--n: GPU counts must be between 1 and 100000")
    if busbw is not None and not 0 < busbw < 100_000:
        raise UserError(f"--busbw {busbw}: must be a positive GB/s figure below 100000")
    if overlap is not None and not 0 <= overlap <= 1:
        raise UserError(f"--overlap {overlap}: must be between 0 and 1")
    if throughput is not None:
        thr, bs, src = throughput, batch_size or 256, "given"
        if thr <= 0:
            raise UserError("--throughput must be positive")
    else:
        r = single_gpu_throughput(store, workload, g.name, batch_size, ddp_model,
                                  (variant or "seed") if ddp_model else variant)
        if r is None:
            raise UserError(f"no single-GPU {workload} result on {g.name}"
                            + (f" at batch size {batch_size}" if batch_size else "")
                            + "; pass --throughput (items/s on one GPU) or import published results")
        thr, bs = r["throughput_median"], _batch_size(r) or batch_size or 1
        src = f"{r.get('source')} {thr:,.1f} {r.get('unit')}" + (f" ({r.get('origin')})" if r.get("origin") else "")
    compute = bs / thr
    if busbw is not None:
        bw, bw_from = busbw, "given"
    else:
        bw, bw_from = measured_busbw(store, g.name) or catalog_busbw(g)
    if overlap is not None:
        ov, ov_from = overlap, "given"
    else:
        ov, ov_from = (measured_overlap(store, g.name, ddp_model)
                       or (DEFAULT_OVERLAP, "default (no overlap: a lower bound)"))
    grad_workload = f"{ddp_model}-train" if ddp_model else workload
    nbytes = PARAM_COUNTS[grad_workload] * (2 if variant in COMPRESSED_VARIANTS else GRAD_BYTES_PER_PARAM)
    rows = []
    for n in ns:
        comm = ring_allreduce_s(nbytes, n, bw)
        exposed = (1 - ov) * comm
        step = compute + exposed
        rows.append({"n": n, "comm_s": comm, "exposed_s": exposed, "step_s": step,
                     "efficiency": compute / step, "throughput": n * bs / step})
    return {"gpu": g.name, "workload": workload + (f" ({ddp_model}, {variant or 'seed'})" if ddp_model else ""),
            "batch_size": bs, "grad_bytes": nbytes, "compute_s": compute,
            "compute_from": src, "busbw_gbs": bw, "busbw_from": bw_from, "overlap": ov, "overlap_from": ov_from,
            "rows": rows}


COLUMNS = [("n", "GPUs"), ("compute_ms", "compute ms"), ("comm_ms", "all-reduce ms"),
           ("exposed_ms", "exposed ms"), ("step_ms", "step ms"), ("efficiency", "scaling eff."),
           ("throughput", "items/s")]


def render(result: dict, fmt: str) -> str:
    if fmt == "json":
        return _render([], [], "json", data=result)
    rows = [{**r, "compute_ms": result["compute_s"] * 1e3, "comm_ms": r["comm_s"] * 1e3,
             "exposed_ms": r["exposed_s"] * 1e3, "step_ms": r["step_s"] * 1e3, "efficiency": f"{r['efficiency']:.3f}"}
            for r in result["rows"]]
    notes = [f"gradients {result['grad_bytes'] / 1e6:.0f} MB all-reduced; batch {result['batch_size']} per GPU",
             f"compute from {result['compute_from']}",
             f"busbw {result['busbw_gbs']:.0f} GB/s from {result['busbw_from']}",
             f"overlap {result['overlap']:.2f} from {result['overlap_from']}"]
    return _render(COLUMNS, rows, fmt, title=f"What if: {result['workload']} on N x {result['gpu']}", notes=notes)
