"""Training a Llama-style decoder: article 001's large-model half (FP8, DeviceMesh, checkpointing).

Causal-LM loss on random tokens, AdamW, the model of llm/model.py at a named shape or a
Hugging Face config.json.  Always launched through torchrun (one rank is a world of one);
``parallel`` lays the ranks out:

* none: one rank, the plain model;
* ddp: DistributedDataParallel, every rank a replica;
* fsdp: FSDP2 ``fully_shard`` per block then the root, over a 1-D mesh of all ranks;
* tp: tensor parallelism (DTensor ``parallelize_module``) over all ranks;
* fsdp+tp: a 2-D mesh [world / tp, tp]: FSDP2 over the first dimension, TP over the second.

Precision recipes:

* seed: FP32 everywhere (TF32 off, PyTorch's default);
* tf32: FP32 weights, TF32 matmuls;
* amp-bf16: FP32 weights and AdamW state, matmuls under bf16 autocast;
* bf16: bf16 compute.  Under parallel=fsdp / fsdp+tp through FSDP2's
  MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32): the sharded FP32 parameters are
  the master copy AdamW updates.  Otherwise the weights themselves are bf16 and AdamW keeps
  its moments in bf16 too (plain bf16 training, no master copy: cheaper in memory, and the
  update loses precision over a long run -- fine for speed, said here so nobody mistakes it
  for a convergence recipe);
* fp8: torchao.float8 ``convert_to_float8_training`` (dynamic tensorwise scaling) on every
  linear but the output head and any whose (sharded) dims are not multiples of 16; the rest
  runs at the precision variant chosen beside it (bf16 or amp-bf16; FP32 alone).  Needs a
  CUDA GPU of compute capability 8.9+ and torchao, else the case is stored as skipped.
  Transformer Engine is not wired in: its layers replace the model's modules, which is a
  second model, not a variant of this one.

Throughput is tokens: every rank reports batch_size x seq_len / tp tokens per step (the TP
ranks of one data-parallel group share their batch), so the sum over ranks that
runner/rank.py forms is the world's tokens/s.  FLOPs per token: flops.flops_per_token
(6 N + 12 L H T).  The record holds FLOPs and time; MFU (over the catalog's peak for the GPU)
is computed when the record is read (analysis/rows/mfu.py), never frozen into it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from gpuarena.measure import profile as prof_read
from gpuarena.store.flags import nan_flag
from gpuarena.workloads.base import Workload, apply_math_mode, autocast_dtype, precision_of
from gpuarena.workloads.llm import fp8 as fp8_mod
from gpuarena.workloads.llm import layout as lay
from gpuarena.workloads.llm import sharding
from gpuarena.workloads.llm.flops import flops_per_token, param_counts
from gpuarena.workloads.llm.model import build
from gpuarena.workloads.llm.optim import adamw
from gpuarena.workloads.llm.shapes import resolve_shape
from gpuarena.workloads.llm.train_spec import LLMTrainSpec

PROFILED_STEPS = 3


class LLMTrain(LLMTrainSpec, Workload):
    # --- setup --------------------------------------------------------------------------
    def setup(self) -> None:
        v, p, dev = self.ctx.variants, self.p, self.device
        self.cfg = resolve_shape(p["shape"], p["hf_config"])
        self.dp, self.tp = lay.layout(p["parallel"], p["tp"], self.ctx.world_size)
        lay.check_tp(self.cfg, self.tp)
        fp8 = "fp8" in v
        if fp8:
            fp8_mod.require(dev)
        apply_math_mode(v)
        fsdp = p["parallel"] in ("fsdp", "fsdp+tp")
        sharded = p["parallel"] in ("fsdp", "tp", "fsdp+tp")
        self.mesh = lay.make_mesh(dev, self.dp, self.tp) if p["parallel"] != "none" else None
        model = build(self.cfg, dev, meta=sharded)
        if "bf16" in v and not fsdp:   # plain bf16 weights (on meta too: to_empty keeps the dtype)
            model = model.to(torch.bfloat16)
        self.fp8_linears = fp8_mod.convert_training(model, self.tp, fsdp) if fp8 else 0
        if self.tp > 1:
            sharding.apply_tp(model, self.mesh["tp"], fp8)
        if "activation-checkpointing" in v:
            sharding.apply_checkpointing(model)
        if "compile" in v:
            sharding.apply_compile(model)
        if fsdp:
            sharding.apply_fsdp(model, self.mesh["dp"], bf16="bf16" in v)
        if sharded:
            sharding.materialise(model, dev)
        self.model = model
        if p["parallel"] == "ddp":
            from torch.nn.parallel import DistributedDataParallel as DDP

            self.model = DDP(model, device_ids=[dev.index] if dev.type == "cuda" else None)
        self.fused = "fused-adamw" in v
        self.opt = adamw(model.parameters(), lr=p["lr"], fused=self.fused)
        self.fp8_fsdp = fp8 and fsdp
        self.amp = autocast_dtype(v)
        b, t = p["batch_size"], p["seq_len"]
        self.tokens = torch.randint(0, self.cfg.vocab_size, (b, t + 1), device=dev)
        self.loss = None
        self.loss_first = None

    def step(self) -> None:
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast(self.device.type, dtype=self.amp, enabled=self.amp is not None):
            logits = self.model(self.tokens[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1).float(), self.tokens[:, 1:].flatten())
        loss.backward()
        self.opt.step()
        if self.fp8_fsdp:   # one all-reduce of the FP8 weight scales for the next all-gather
            fp8_mod.precompute_fsdp_scales(self.model)
        self.loss = loss.detach()
        if self.loss_first is None:   # the first step is untimed (compilation lands there)
            self.loss_first = self.loss.item()

    # --- what is reported ----------------------------------------------------------------
    def items_per_step(self) -> float:
        return float(self.p["batch_size"] * self.p["seq_len"] / self.tp)

    def flops_per_item(self) -> float:
        return flops_per_token(self.cfg, self.p["seq_len"], training=True)

    def precision(self) -> str:
        return "fp8" if "fp8" in self.ctx.variants else precision_of(self.ctx.variants)

    def check(self) -> list:
        if self.loss is not None and not torch.isfinite(self.loss).item():
            return [nan_flag("loss turned to NaN/inf")]
        return []

    def extra(self) -> dict:
        total, non_embedding = param_counts(self.cfg)
        out = {"shape": self.p["hf_config"] or self.p["shape"], "params_total": total,
               "params_non_embedding": non_embedding, "parallel": self.p["parallel"],
               "dp_degree": self.dp, "tp_degree": self.tp,
               "mesh_shape": list(self.mesh.shape) if self.mesh is not None else [1],
               "fp8_linears": self.fp8_linears, "fused_adamw": self.fused,
               "loss_first": self.loss_first,
               "loss_last": self.loss.item() if self.loss is not None else None,
               "flops_formula": "6 x non-embedding params + 12 x layers x hidden x seq_len per token",
               "executed_precision": self.executed_precision(self.ctx.variants)}
        if self.ctx.world_size > 1:
            out.update(self._communication())
        return out

    def _communication(self) -> dict:
        """Communication per step from the profiler's timeline (measure/profile.py says how)."""
        import torch.distributed as dist
        from torch.profiler import ProfilerActivity, profile, record_function

        cuda = self.device.type == "cuda"
        steps = 1 if self.p["shape"] == "tiny" else PROFILED_STEPS
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        dist.barrier()
        with profile(activities=activities) as prof:
            for _ in range(steps):
                with record_function(prof_read.STEP_LABEL):
                    self.step()
            if cuda:
                torch.cuda.synchronize(self.device)
        total, exposed = prof_read.comm_timeline(prof, cuda)
        return {"comm_total_s": total / steps, "comm_exposed_s": exposed / steps,
                "comm_profiled_s": prof_read.comm_seconds(prof, cuda) / steps,
                "comm_method": "profiler timeline: communication not overlapped by compute"}

    @staticmethod
    def finalize(result: dict, per_rank: list[dict], world_size: int) -> None:
        """Job figures: tokens/s per GPU and the mean communication.  MFU is not stored: it is
        computed when read, from the stored TFLOP/s and the catalog's peak (analysis/rows/mfu.py)."""
        extra = result["extra"]
        extra["tokens_per_s_per_gpu"] = result["throughput_median"] / world_size
        for key in ("comm_total_s", "comm_exposed_s"):
            values = [(r.get("extra") or {}).get(key) for r in per_rank]
            if all(isinstance(x, (int, float)) for x in values):
                extra[key] = sum(values) / len(values)
        step_s = result["latency"]["median"]
        if extra.get("comm_exposed_s") is not None and step_s:
            extra["comm_exposed_share"] = extra["comm_exposed_s"] / step_s
