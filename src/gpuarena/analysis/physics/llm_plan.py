"""Memory and time of training a large decoder on N GPUs: the 175B question, as arithmetic.

Pure functions over a model config (workloads/llm/shapes.py), the GPU catalog and a
parallel layout (tensor x pipeline x data).  Every assumption is returned with the figures.

Memory per GPU (mixed precision with AdamW, Rajbhandari et al. 2020, "ZeRO", section 3.1:
2 + 2 + 12 = 16 bytes per parameter): bf16 parameters and gradients split over TP x PP; the
FP32 master copy and both Adam moments (12 bytes) also split over the data-parallel ranks
(ZeRO stage 1, Megatron's distributed optimizer).  Activations per layer after Korthikanti
et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"
(arXiv:2205.05198), eq. 2 and section 4: s b h (34 + 5 a s / h) bytes without parallelism,
divided by t with tensor + sequence parallelism; flash attention keeps no s x s scores, which
drops the 5 a s / h term (the paper's selective recomputation); full checkpointing stores
each layer's input only, 2 s b h / t, plus one layer's activations while it is recomputed.
Under 1F1B pipelining the first stage holds pp micro-batches of L / pp layers: L layers' worth.
The output logits add s b V x 6 / t bytes (bf16 logits and their FP32 copy for the loss).

Time, two ways.  With an MFU (given, or from evidence: llm_efficiency.py): end to end, as papers
quote it: model FLOPs (6 N + 12 L H T per token, flops.flops_per_token, PaLM's, Megatron's and
torchtitan's count) / (n x dense peak x MFU), or the step's traffic over its links (_comm, all of it
overlapped at best) where that is longer.  Without one (article 001's claims), the breakdown:
hardware FLOPs (x 4/3 under full recomputation) at a compute efficiency, the pipeline bubble, TP
all-reduces and the ZeRO-1 gradient all-reduce not hidden, FSDP's all-gathers and reduce-scatter
prefetched behind compute.  Ring collectives move 2 (k - 1) / k of the message per GPU.  NVLink: the
catalog's bidirectional figure halved; PCIe cards talk over PCIe x16 within a node and get no
tensor parallelism; between nodes the network of training_network.py.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict

from gpuarena.analysis.physics.interconnect import is_pcie_card, pcie_link
from gpuarena.analysis.physics.training_network import GPUS_PER_NODE, resolve as resolve_network
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads.llm.flops import flops_per_token, param_counts
from gpuarena.analysis.physics.llm_shapes import model_config
from gpuarena.workloads.llm.shapes import LlamaConfig

USABLE_MEMORY = 0.9          # allocator fragmentation, CUDA context, NCCL buffers: 10% kept free
GPT3_BATCH = 1536            # sequences of 2048 (3.2M tokens): Brown et al. 2020, table 2.1, for 175B
BYTES = {"param": 2, "grad": 2, "optimizer": 12}
# the breakdown's compute share (article 001's claims): gpuarena's llama-1b, bf16+compile+fused-adamw, one H200
DEFAULT_COMPUTE_EFF = (0.582, "default: gpuarena's single-H200 llama-1b bf16+compile+fused-adamw MFU (BENCHMARKS.md)")
RECOMPUTE = 4 / 3          # full recomputation runs the forward twice: 8 N instead of 6 N per token

@dataclass(frozen=True)
class Layout:
    n: int
    tp: int
    pp: int
    dp: int
    micro_batch: int
    global_batch: int        # sequences per optimizer step
    seq_len: int
    checkpointing: bool
    zero3: bool = False      # FSDP: parameters and gradients sharded over dp too

    @property
    def micro_batches(self) -> int:
        return max(1, self.global_batch // (self.dp * self.micro_batch))


def activation_bytes_per_layer(cfg: LlamaConfig, seq: int, micro: int, tp: int, checkpointing: bool,
                               flash: bool = True) -> float:
    """Korthikanti et al. 2022 (see the module docstring), with sequence parallelism."""
    sbh = seq * micro * cfg.dim
    if checkpointing:
        return 2.0 * sbh / tp
    scores = 0.0 if flash else 5.0 * cfg.n_heads * seq / cfg.dim
    return sbh * (34.0 + scores) / tp


def memory_per_gpu(cfg: LlamaConfig, lay: Layout, flash: bool = True) -> dict[str, float]:
    """Bytes per GPU of the first pipeline stage (the fullest), by kind."""
    total, _ = param_counts(cfg)
    shard = total / (lay.tp * lay.pp) / (lay.dp if lay.zero3 else 1)
    per_layer = activation_bytes_per_layer(cfg, lay.seq_len, lay.micro_batch, lay.tp, lay.checkpointing, flash)
    in_flight = cfg.n_layers / lay.pp * min(lay.pp, lay.micro_batches)   # 1F1B: pp micro-batches of L/pp layers
    acts = per_layer * in_flight
    if lay.checkpointing:   # the layer being recomputed holds its full activations
        acts += activation_bytes_per_layer(cfg, lay.seq_len, lay.micro_batch, lay.tp, False, flash)
    out = {"params": BYTES["param"] * shard, "grads": BYTES["grad"] * shard,
           "optimizer": BYTES["optimizer"] * shard / (1 if lay.zero3 else lay.dp), "activations": acts,
           "logits": 6.0 * lay.seq_len * lay.micro_batch * cfg.vocab_size / lay.tp}
    out["total"] = sum(out.values())
    return out


def largest_micro_batch(cfg: LlamaConfig, lay: Layout, memory_gb: float, limit: int = 4096) -> int:
    """The largest micro-batch whose memory fits USABLE_MEMORY of the card; 0 if none does."""
    budget = memory_gb * 1e9 * USABLE_MEMORY
    best, b = 0, 1
    while b <= limit and memory_per_gpu(cfg, _with(lay, micro_batch=b))["total"] <= budget:
        best, b = b, b * 2
    lo, hi = best, min(limit, b)
    while best and hi - lo > 1:   # between the last power of two that fits and the first that does not
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if memory_per_gpu(cfg, _with(lay, micro_batch=mid))["total"] <= budget else (lo, mid)
    return lo if best else 0


def _with(lay: Layout, **kw) -> Layout:
    return Layout(**{**asdict(lay), **kw})


def megatron_candidates(cfg: LlamaConfig, n: int, memory_gb: float, seq_len: int, global_batch: int,
                        checkpointing: bool = False, max_tp: int = GPUS_PER_NODE) -> list[Layout]:
    """Megatron's layouts: TP inside a node (up to max_tp, dividing the heads), each pipeline depth
    (dividing the ranks left, at most one layer per stage) at which a micro-batch of 1 fits, DP over the rest."""
    tp = max(t for t in (1, 2, 4, 8) if t <= min(n, max_tp) and cfg.n_heads % t == 0 and n % t == 0)
    out = []
    for pp in range(1, min(n // tp, cfg.n_layers) + 1):
        if (n // tp) % pp:          # stages may hold unequal layer counts (Llama 3: 126 over 16)
            continue
        lay = Layout(n, tp, pp, n // (tp * pp), 1, global_batch, seq_len, checkpointing)
        if largest_micro_batch(cfg, lay, memory_gb):
            out.append(lay)
    return out or [Layout(n, tp, n // tp, 1, 1, global_batch, seq_len, checkpointing)]


def megatron_layout(cfg: LlamaConfig, n: int, memory_gb: float, seq_len: int, global_batch: int,
                    checkpointing: bool = False, max_tp: int = GPUS_PER_NODE) -> Layout:
    """The fewest pipeline stages that fit (Megatron's recipe)."""
    return megatron_candidates(cfg, n, memory_gb, seq_len, global_batch, checkpointing, max_tp)[0]


choose_layout = megatron_layout      # the name llm_claims and the tests know


def fsdp_layout(cfg: LlamaConfig, n: int, memory_gb: float, seq_len: int, global_batch: int,
                checkpointing: bool = False) -> Layout:
    """FSDP (ZeRO-3) over every GPU, at the largest micro-batch that fits (up to the global batch
    over the ranks), so that each all-gather serves as many tokens as memory allows."""
    lay = Layout(n, 1, 1, n, 1, global_batch, seq_len, checkpointing, zero3=True)
    micro = largest_micro_batch(cfg, lay, memory_gb, limit=max(1, global_batch // n))
    return _with(lay, micro_batch=max(1, micro))


def nvlink_spans(gpu, n: int) -> bool:
    """Tensor parallelism needs NVLink across its group: SXM boards have it; PCIe cards (no NVLink,
    or a bridge that pairs two) talk over PCIe beyond a pair, where FSDP is the layout."""
    return bool(gpu.nvlink_gbs) and (not is_pcie_card(gpu) or n <= 2)


def best_layout(cfg: LlamaConfig, gpu, n: int, seq_len: int, global_batch: int, checkpointing: bool,
                precision: str, eff: float, network_gbs: float | None = None) -> Layout:
    """The fastest layout that fits, by the breakdown: FSDP, and Megatron TP x PP x DP where NVLink
    spans the tensor-parallel group."""
    # without NVLink: pipeline stages (small point-to-point sends) beside FSDP, no TP
    max_tp = GPUS_PER_NODE if nvlink_spans(gpu, min(n, GPUS_PER_NODE)) else 1
    options = [fsdp_layout(cfg, n, gpu.memory_gb, seq_len, global_batch, checkpointing),
               *megatron_candidates(cfg, n, gpu.memory_gb, seq_len, global_batch, checkpointing, max_tp)]
    fits = [x for x in options if _fits(cfg, x, gpu.memory_gb)]
    return min(fits or options, key=lambda x: step_time(cfg, x, gpu, None, precision, network_gbs, eff)["step_s"])


def _fits(cfg: LlamaConfig, lay: Layout, memory_gb: float) -> bool:
    return memory_per_gpu(cfg, lay)["total"] <= memory_gb * 1e9 * USABLE_MEMORY


def ring(k: int) -> float:
    return 2.0 * (k - 1) / k if k > 1 else 0.0


def _links(gpu, lay: Layout, network_gbs: float | None) -> tuple[float, float]:
    """(GB/s one way within a node, between nodes) for this card."""
    net = network_gbs or resolve_network(gpu, lay.n, None)[0] or 0.0
    if nvlink_spans(gpu, min(lay.n, GPUS_PER_NODE)):
        intra = gpu.nvlink_gbs / 2
    else:
        intra = pcie_link(gpu)[1]
    return intra, net


def _comm(cfg: LlamaConfig, lay: Layout, gpu, network_gbs: float | None) -> dict:
    """Seconds each link needs for one step's traffic, nothing overlapped: TP all-reduces (4 per layer and
    micro-batch, 6 with recomputation), DP (ZeRO-1: one gradient all-reduce; FSDP: all-gather in forward
    and backward plus a reduce-scatter per micro-batch, 1.5 all-reduces) and PP sends."""
    intra, net = _links(gpu, lay, network_gbs)
    multi_node = lay.n > GPUS_PER_NODE
    m = lay.micro_batches
    # interleaved 1F1B (Narayanan et al. 2021, section 2.2.2): v chunks per stage, one layer per chunk
    v = max(1, cfg.n_layers // lay.pp)
    act_msg = 2.0 * lay.seq_len * lay.micro_batch * cfg.dim                # bf16 activations
    per_layer = 6 if lay.checkpointing else 4
    grads = BYTES["grad"] * param_counts(cfg)[0] / (lay.tp * lay.pp)
    dp_bw = net if multi_node else intra
    pp_bw = net if multi_node and lay.pp > 1 else intra
    return {"tp": m * (cfg.n_layers / lay.pp) * per_layer * ring(lay.tp) * act_msg / (intra * 1e9),
            "dp": (m * 1.5 if lay.zero3 else 1.0) * ring(lay.dp) * grads / (dp_bw * 1e9) if dp_bw else math.inf,
            "pp": (2 * v * m * act_msg / lay.tp / (pp_bw * 1e9)) if lay.pp > 1 else 0.0, "v": v, "m": m}


def step_time(cfg: LlamaConfig, lay: Layout, gpu, mfu: float | None, precision: str = "bf16",
              network_gbs: float | None = None, eff: float = DEFAULT_COMPUTE_EFF[0]) -> dict:
    """Seconds per optimizer step.  With an MFU: model FLOPs at that MFU (end to end), or the step's
    traffic over its links where that is longer (``traffic_s``, all overlapped at best).  Without: the
    breakdown (compute at ``eff`` with recomputation counted, bubble, comm)."""
    peak = gpu.peak(precision)
    if not peak:
        raise UserError(f"{gpu.short} has no {precision} peak in the catalog")
    tokens = lay.global_batch * lay.seq_len
    model_flops = tokens * flops_per_token(cfg, lay.seq_len, training=True)
    c = _comm(cfg, lay, gpu, network_gbs)
    if mfu is not None:
        compute, traffic = model_flops / (lay.n * peak * 1e12 * mfu), c["tp"] + c["dp"] + c["pp"]
        step = max(compute, traffic)
        return {"bubble_s": 0.0, "tp_comm_s": 0.0, "dp_comm_s": 0.0, "pp_comm_s": 0.0, "tokens_per_step": tokens,
                "compute_s": compute, "traffic_s": traffic, "step_s": step, "bound": "compute at the MFU"
                if compute >= traffic else "the links (the step's traffic outlasts its compute)",
                "mfu": model_flops / (lay.n * peak * 1e12 * step)}
    compute = model_flops * (RECOMPUTE if lay.checkpointing else 1.0) / (lay.n * peak * 1e12 * eff)
    m, v = c["m"], c["v"]
    bubble = compute * (lay.pp - 1) / (m * v)
    if lay.zero3:      # prefetched behind compute: what exceeds it, and the first layer's, exposed
        per_micro = c["dp"] / m
        dp_comm = m * (max(0.0, per_micro - compute / m) + per_micro / cfg.n_layers)
    else:
        dp_comm = c["dp"]
    total = compute + bubble + c["tp"] + dp_comm + c["pp"]
    return {"compute_s": compute, "bubble_s": bubble, "tp_comm_s": c["tp"], "dp_comm_s": dp_comm,
            "pp_comm_s": c["pp"], "step_s": total, "tokens_per_step": tokens,
            "mfu": model_flops / (lay.n * peak * 1e12 * total)}


Num = Union[int, float]          # a figure keeps its type in the JSON


class PlanRow(BaseModel):
    """One layout of the plan (without, then with activation checkpointing): memory per GPU, whether it fits,
    the step's parts and the days (band); a layout that does not fit has no days, and says why."""

    model_config = ConfigDict(extra="allow")
    checkpointing: bool
    layout: dict[str, Any]            # tp, pp, dp, micro_batch, zero3, ...
    memory: dict[str, Any]            # bytes per GPU by part, and the total
    fits: bool
    largest_micro_batch: int
    compute_s: Num
    bubble_s: Num
    tp_comm_s: Num
    dp_comm_s: Num
    pp_comm_s: Num
    step_s: Num
    tokens_per_step: Num
    mfu: Num
    traffic_s: Optional[Num] = None   # at a given MFU: the step's traffic over its links
    bound: Optional[str] = None
    days: Optional[Num] = None
    compute_only_days: Optional[Num] = None
    days_low: Optional[Num] = None
    days_high: Optional[Num] = None
    why: Optional[str] = None


class Plan(BaseModel):
    """`gpuarena whatif -w llm-train`: one model's training on n x one GPU, its layouts and assumptions."""

    model: str
    gpu: str
    n: int
    tokens: Num
    mfu: Optional[Num] = None
    mfu_from: str
    mfu_band: Optional[tuple[Num, Num]] = None
    precision: str
    params: Num
    seq_len: int
    rows: list[PlanRow]
    assumptions: dict[str, Any]


def plan(model: str, tokens: float, gpu_name: str, n: int, mfu: float | None, precision: str = "bf16",
         seq_len: int | None = None, global_batch: int = GPT3_BATCH, mfu_from: str = "given",
         efficiency: tuple[float, str] = DEFAULT_COMPUTE_EFF, busbw: float | None = None,
         mfu_band: tuple[float, float] | None = None) -> Plan:
    """Memory per GPU and training time of `tokens` tokens of `model` on n x gpu, with assumptions.
    ``mfu`` None: the breakdown, at ``efficiency`` (share of peak one GPU reaches, and its origin).
    ``mfu_band``: the MFUs the evidence spans, giving each row days_low..days_high.  ``busbw``: GB/s
    per GPU between nodes (training_network.resolve).  A row that does not fit has no days."""
    if mfu is not None and not (0 < mfu <= 1):
        raise UserError(f"--mfu {mfu}: a share of peak in (0, 1]")
    if not (tokens > 0 and math.isfinite(tokens)):
        raise UserError(f"--tokens {tokens}: a positive number of tokens")
    if n < 1:
        raise UserError("--n: at least one GPU")
    cfg, gpu = model_config(model), catalog.match(gpu_name)
    net, net_src = resolve_network(gpu, n, busbw)
    seq = seq_len or cfg.max_seq_len
    if not 1 <= seq <= cfg.max_seq_len * 16:
        raise UserError(f"--seq-len {seq}: between 1 and {cfg.max_seq_len * 16} for {model}")
    eff, eff_from = efficiency
    out = {"model": model, "gpu": gpu.name, "n": n, "tokens": tokens, "mfu": mfu, "mfu_from": mfu_from,
           "mfu_band": mfu_band, "precision": precision, "params": param_counts(cfg)[0], "seq_len": seq, "rows": []}
    for ckpt in (False, True):
        lay = best_layout(cfg, gpu, n, seq, global_batch, ckpt, precision, eff, net)
        out["rows"].append(_row(cfg, lay, gpu, tokens, mfu, precision, eff, net, mfu_band))
    out["assumptions"] = _assumptions(mfu, eff, eff_from, global_batch, seq, gpu, n, precision, net, net_src)
    return Plan.model_validate(out)


def _row(cfg, lay: Layout, gpu, tokens: float, mfu, precision: str, eff: float, net, band) -> dict:
    mem = memory_per_gpu(cfg, lay)
    t = step_time(cfg, lay, gpu, mfu, precision, net, eff=eff)
    steps = tokens / t["tokens_per_step"]
    fits = _fits(cfg, lay, gpu.memory_gb)
    row = {"checkpointing": lay.checkpointing, "layout": asdict(lay), "memory": mem, "fits": fits,
           "largest_micro_batch": largest_micro_batch(cfg, lay, gpu.memory_gb), **t,
           "days": steps * t["step_s"] / 86400, "compute_only_days": steps * t["compute_s"] / 86400}
    if band and mfu is not None:
        row["days_low"], row["days_high"] = (steps * step_time(cfg, lay, gpu, x, precision, net)["step_s"] / 86400
                                             for x in (band[1], band[0]))
    if not fits:   # no duration for a run that cannot start
        row.update(days=None, compute_only_days=None, days_low=None, days_high=None,
                   why=f"needs {mem['total'] / 1e9:,.0f} GB per GPU; the {gpu.short} has {gpu.memory_gb:g} GB, "
                       f"{USABLE_MEMORY:.0%} usable: more GPUs, checkpointing or a smaller model")
    return row


def _assumptions(mfu, eff, eff_from, global_batch, seq, gpu, n, precision, net, net_src) -> dict:
    return {
        "flops_per_token": "6 x non-embedding params + 12 x layers x hidden x seq_len (model FLOPs)",
        "time": (f"MFU {mfu:g} end to end: model FLOPs / (n x peak x MFU), or the step's traffic over its links "
                 "where that is longer" if mfu is not None else
                 f"breakdown: compute at {eff:.3f} of peak ({eff_from}), x 4/3 under full recomputation (8N vs 6N), "
                 "pipeline bubble, TP and ZeRO-1 communication exposed, FSDP's prefetched"),
        "bytes_per_param": "bf16 params 2 + bf16 grads 2 + FP32 master and Adam moments 12 (ZeRO-1 over dp; "
                           "FSDP/ZeRO-3 shards all 16 over dp)",
        "activations": "Korthikanti et al. 2022 sbh(34 + 5as/h)/t per layer, flash attention (no 5as/h term), "
                       "sequence parallel; full checkpointing 2sbh/t",
        "layout": "the fastest that fits: FSDP over all GPUs, or TP within a node (<= 8, NVLink only) with a "
                  "pipeline depth that fits and DP over the rest (interleaved 1F1B, one layer per chunk); PCIe cards "
                  "get no TP",
        "global_batch": f"{global_batch} sequences of {seq} tokens",
        "nvlink_gbs_one_way": (gpu.nvlink_gbs or 0) / 2 if nvlink_spans(gpu, min(n, GPUS_PER_NODE)) else None,
        "network_gbs_per_gpu": net, "network_source": net_src,
        "usable_memory": USABLE_MEMORY, "peak_tflops": gpu.peak(precision),
    }
