"""Memory and time of training a large decoder on N GPUs: the 175B question, as arithmetic.

Pure functions over a model config (workloads/llm/model.py's shapes), the GPU catalog and a
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

Time: training FLOPs (6 N + 12 L H T per token, model.flops_per_token) over
(MFU x dense peak x N), times (1 + pipeline bubble (pp - 1) / m), plus communication per step
that is assumed not hidden: tensor-parallel all-reduces (4 per layer and micro-batch, 6 with
full recomputation) over NVLink, the data-parallel gradient reduce-scatter + all-gather over
the network between nodes, and pipeline sends.  Ring collectives move 2 (k - 1) / k of the
message per GPU.  NVLink: the catalog's bidirectional figure halved (one direction);
between nodes the network figure of NETWORK below.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads.llm.model import SHAPES, LlamaConfig, flops_per_token, param_counts

# Network per GPU between nodes, GB/s in one direction, by architecture: the DGX systems'
# compute fabric has one adapter per GPU.
NETWORK: dict[str, tuple[float, str]] = {
    "Ampere": (25.0, "DGX A100: eight Mellanox 200 Gb/s HDR InfiniBand adapters, one per GPU "
                     "(https://geektopia.es/es/technology/2020/05/14/noticias/nvidia-anuncia-el-servidor-dgx-a100-"
                     "ocho-tesla-a100-desde-200-000-dolares.html; Selene's DGX A100s on HDR InfiniBand, "
                     "https://gpt3demo.com/apps/mt-nlg-by-microsoft-and-nvidia-ai)"),
    "Hopper": (50.0, "DGX H100/H200: eight single-port ConnectX-7, up to 400 Gb/s each "
                     "(https://docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-"
                     "enterprise-ai/latest/core-components.html)"),
}
GPUS_PER_NODE = 8
USABLE_MEMORY = 0.9          # allocator fragmentation, CUDA context, NCCL buffers: 10% kept free
GPT3_BATCH = 1536            # sequences of 2048 (3.2M tokens): Brown et al. 2020, table 2.1, for 175B
BYTES = {"param": 2, "grad": 2, "optimizer": 12}


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

    @property
    def micro_batches(self) -> int:
        return max(1, self.global_batch // (self.dp * self.micro_batch))


def model_config(name: str) -> LlamaConfig:
    if name not in SHAPES:
        raise UserError(f"--model {name!r}: known shapes {', '.join(SHAPES)}")
    return SHAPES[name]


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
    shard = total / (lay.tp * lay.pp)
    per_layer = activation_bytes_per_layer(cfg, lay.seq_len, lay.micro_batch, lay.tp, lay.checkpointing, flash)
    in_flight = cfg.n_layers / lay.pp * min(lay.pp, lay.micro_batches)   # 1F1B: pp micro-batches of L/pp layers
    acts = per_layer * in_flight
    if lay.checkpointing:   # the layer being recomputed holds its full activations
        acts += activation_bytes_per_layer(cfg, lay.seq_len, lay.micro_batch, lay.tp, False, flash)
    out = {"params": BYTES["param"] * shard, "grads": BYTES["grad"] * shard,
           "optimizer": BYTES["optimizer"] * shard / lay.dp, "activations": acts,
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


def choose_layout(cfg: LlamaConfig, n: int, memory_gb: float, seq_len: int, global_batch: int,
                  checkpointing: bool = False) -> Layout:
    """Megatron's recipe: TP inside a node (up to 8, dividing the heads), then the fewest
    pipeline stages (dividing the layers) at which a micro-batch of 1 fits, data parallel over the rest."""
    tp = max(t for t in (1, 2, 4, 8) if t <= min(n, GPUS_PER_NODE) and cfg.n_heads % t == 0 and n % t == 0)
    for pp in range(1, n // tp + 1):
        if (n // tp) % pp or cfg.n_layers % pp:
            continue
        lay = Layout(n, tp, pp, n // (tp * pp), 1, global_batch, seq_len, checkpointing)
        if largest_micro_batch(cfg, lay, memory_gb):
            return lay
    return Layout(n, tp, n // tp, 1, 1, global_batch, seq_len, checkpointing)


def ring(k: int) -> float:
    return 2.0 * (k - 1) / k if k > 1 else 0.0


def step_time(cfg: LlamaConfig, lay: Layout, gpu, mfu: float, precision: str = "bf16",
              network_gbs: float | None = None) -> dict:
    """Seconds per optimizer step: compute with the pipeline bubble, and each communication."""
    peak = gpu.peak(precision)
    if not peak:
        raise UserError(f"{gpu.short} has no {precision} peak in the catalog")
    nvlink = (gpu.nvlink_gbs or 0) / 2 or None
    net = network_gbs or network_of(gpu)[0]
    tokens = lay.global_batch * lay.seq_len
    compute = tokens * flops_per_token(cfg, lay.seq_len, training=True) / (lay.n * peak * 1e12 * mfu)
    m = lay.micro_batches
    bubble = (lay.pp - 1) / m
    act_msg = 2.0 * lay.seq_len * lay.micro_batch * cfg.dim                # bf16 activations
    tp_bw = nvlink if lay.tp <= GPUS_PER_NODE and nvlink else net
    per_layer = 6 if lay.checkpointing else 4
    tp_comm = m * (cfg.n_layers / lay.pp) * per_layer * ring(lay.tp) * act_msg / (tp_bw * 1e9)
    grads = BYTES["grad"] * param_counts(cfg)[0] / (lay.tp * lay.pp)
    dp_bw = net if lay.n > GPUS_PER_NODE else (nvlink or net)
    dp_comm = ring(lay.dp) * grads / (dp_bw * 1e9)
    pp_bw = net if lay.n > GPUS_PER_NODE and lay.pp > 1 else (nvlink or net)
    pp_comm = (2 * m * act_msg / lay.tp / (pp_bw * 1e9)) if lay.pp > 1 else 0.0
    total = compute * (1 + bubble) + tp_comm + dp_comm + pp_comm
    return {"compute_s": compute, "bubble_s": compute * bubble, "tp_comm_s": tp_comm, "dp_comm_s": dp_comm,
            "pp_comm_s": pp_comm, "step_s": total, "tokens_per_step": tokens}


def network_of(gpu) -> tuple[float, str]:
    for arch, value in NETWORK.items():
        if gpu.architecture.startswith(arch):
            return value
    return NETWORK["Ampere"][0], f"no figure for {gpu.architecture}: the 200 Gb/s HDR figure assumed"


def plan(model: str, tokens: float, gpu_name: str, n: int, mfu: float, precision: str = "bf16",
         seq_len: int | None = None, global_batch: int = GPT3_BATCH, mfu_from: str = "given") -> dict:
    """Memory per GPU and training time of `tokens` tokens of `model` on n x gpu, with assumptions."""
    if not (0 < mfu <= 1):
        raise UserError(f"--mfu {mfu}: a share of peak in (0, 1]")
    if not (tokens > 0 and math.isfinite(tokens)):
        raise UserError(f"--tokens {tokens}: a positive number of tokens")
    if n < 1:
        raise UserError("--n: at least one GPU")
    cfg, gpu = model_config(model), catalog.match(gpu_name)
    seq = seq_len or min(cfg.max_seq_len, 2048)
    out = {"model": model, "gpu": gpu.name, "n": n, "tokens": tokens, "mfu": mfu, "mfu_from": mfu_from,
           "precision": precision, "params": param_counts(cfg)[0], "rows": []}
    for ckpt in (False, True):
        lay = choose_layout(cfg, n, gpu.memory_gb, seq, global_batch, ckpt)
        mem = memory_per_gpu(cfg, lay)
        t = step_time(cfg, lay, gpu, mfu, precision)
        steps = tokens / t["tokens_per_step"]
        out["rows"].append({"checkpointing": ckpt, "layout": asdict(lay), "memory": mem,
                            "fits": mem["total"] <= gpu.memory_gb * 1e9 * USABLE_MEMORY,
                            "largest_micro_batch": largest_micro_batch(cfg, lay, gpu.memory_gb),
                            **t, "days": steps * t["step_s"] / 86400,
                            "compute_only_days": steps * t["compute_s"] / 86400})
    net, net_src = network_of(gpu)
    out["assumptions"] = {
        "flops_per_token": "6 x non-embedding params + 12 x layers x hidden x seq_len (model FLOPs)",
        "bytes_per_param": "bf16 params 2 + bf16 grads 2 + FP32 master and Adam moments 12 (ZeRO-1 over dp)",
        "activations": "Korthikanti et al. 2022 sbh(34 + 5as/h)/t per layer, flash attention (no 5as/h term), "
                       "sequence parallel; full checkpointing 2sbh/t",
        "layout": "TP within a node (<= 8), fewest pipeline stages that fit, DP over the rest; 1F1B schedule",
        "global_batch": f"{global_batch} sequences of {seq} tokens",
        "nvlink_gbs_one_way": (gpu.nvlink_gbs or 0) / 2 or None,
        "network_gbs_per_gpu": net, "network_source": net_src,
        "communication": "ring collectives, none hidden behind compute (an upper bound on its cost)",
        "usable_memory": USABLE_MEMORY, "peak_tflops": gpu.peak(precision),
    }
    return out


def measured_mfu(results: list[dict], precision: str) -> tuple[float, str]:
    """The best MFU stored by an ok, finite llm-train result at this precision, and where it came from."""
    mine = [r for r in results if r.get("workload") == "llm-train" and r.get("status") == "ok"
            and r.get("precision") == precision and not (r.get("extra") or {}).get("nan")
            and isinstance((r.get("extra") or {}).get("mfu"), (int, float))]
    if not mine:
        raise UserError(f"--mfu measured: no llm-train result at {precision} with an MFU is stored "
                        "(run llm-train on a catalog GPU, or give --mfu 0.4)")
    best = max(mine, key=lambda r: r["extra"]["mfu"])
    where = (f"measured: {best.get('device_name')} x{best.get('gpus') or 1}, {best['variant']}, "
             f"{best['extra'].get('shape')}, result {best.get('id')}")
    return best["extra"]["mfu"], where
