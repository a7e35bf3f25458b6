"""DistributedDataParallel training: the articles' multi-GPU scaling figures.

Both articles' A100/A800 difference is the interconnect: 4-GPU ResNet-50
scaling coefficient 0.92 vs 0.81 and gradient synchronisation ~30% longer on
the A800 (article 000 section 4; article 001 section 3 -- see DIGEST.md).
``ddp-train`` runs an existing training workload (resnet50-train,
bert-large-train, with its own variants) under DDP on every rank; each rank
processes ``batch_size`` items per step.  runner/rank.py adds the ranks'
throughputs; analysis/rows/scaling.py turns them into the efficiency figure.

The gradient-synchronisation cost is measured two ways after the timed
windows, on every rank:

* exposed communication: a window of steps under ``no_sync()`` (no gradient
  all-reduce) against a window of normal steps; the difference per step is the
  communication the backward pass could not hide (``comm_exposed_s``);
* total communication: the profiler's time in NCCL kernels (cuda) or gloo
  operations (cpu) over a few steps (``comm_total_s``); an NCCL kernel is
  resident while it waits for its peers, so this bounds the transfer from above;

``overlap_fraction`` = 1 - exposed / total: the share of communication hidden
behind computation.
"""

from __future__ import annotations

import contextlib
import statistics

import torch

from gpuarena.errors import UserError
from gpuarena.measure.profile import comm_seconds
from gpuarena.measure.timing import WindowTimer
from gpuarena.store.figures import compose
from gpuarena.store.workload_figures import DDPFigures
from gpuarena.workloads import registry
from gpuarena.workloads.base import Param, Workload

PROFILED_STEPS = 3


class _AccumulatingOptimizer:
    """The inner workload's optimizer, made to zero gradients only on the first
    micro-step and to step only on the last: the inner ``step()`` then becomes one
    micro-step of gradient accumulation without the inner workload knowing."""

    def __init__(self, opt):
        self.opt = opt
        self.first = True
        self.last = True

    def zero_grad(self, set_to_none: bool = True):
        if self.first:
            self.opt.zero_grad(set_to_none=set_to_none)

    def step(self, *args, **kwargs):
        if self.last:
            return self.opt.step(*args, **kwargs)
        return None

    def __getattr__(self, name):
        return getattr(self.opt, name)


class DDPTrain(Workload):
    name = "ddp-train"
    figures = DDPFigures
    version = 1
    description = "DistributedDataParallel training of resnet50-train or bert-large-train on N ranks"
    item = "item"
    source = "article 000 section 4, article 001 section 3 (multi-GPU scaling, gradient sync)"
    launcher = "torchrun"
    kind = "training"
    physics = "data-parallel"
    axis = "batch_size"
    rank_aggregate = "sum"             # runner/rank.py: total throughput = sum over ranks
    rank_extra = ("comm_exposed_s", "comm_total_s", "step_nosync_s", "step_sync_s")
    params = (
        # Choices: the registry's workloads that declare a ddp_name (resnet50, bert-large, plugins').
        Param("model", str, "resnet50", "the training workload DDP wraps (a workload's ddp_name)"),
        Param("model_variant", str, "seed", "the inner workload's variant, e.g. amp-bf16+channels-last"),
        Param("batch_size", int, 0, "items per rank per micro-step; 0: the model's own default",
              tiny=2, min=0, max=65536),
        Param("bucket_cap_mb", float, 25.0, "DDP gradient bucket size in MB (PyTorch's default 25)",
              min=0.001, max=4096.0),
        Param("accum_steps", int, 4, "micro-steps per optimizer step for the no-sync variant",
              tiny=2, min=1, max=1024),
        Param("inner_size", str, "full", "sizes of the model's other parameters (tiny in CPU tests)",
              tiny="tiny", choices=("full", "tiny")),
    )
    variants = {
        "seed": "plain DDP with PyTorch's defaults, as the articles ran it",
        "static-graph": "gradient_as_bucket_view=True + static_graph=True (article 001's DDP tip)",
        "fp16-compress": "fp16_compress_hook: gradients all-reduced in FP16",
        "bf16-compress": "bf16_compress_hook: gradients all-reduced in BF16",
        "no-sync": "gradient accumulation: accum_steps micro-steps, all-reduce only on the last (model.no_sync())",
    }
    exclusive = (frozenset({"fp16-compress", "bf16-compress"}),)
    default_warmup = 5
    default_steps = 10

    @classmethod
    def unit_name(cls, params: dict | None = None) -> str:
        """The inner workload's unit (images/s, sequences/s), summed over ranks."""
        inner = registry.ddp_models().get((params or {}).get("model"))
        return inner.unit_name() if inner else super().unit_name()

    @classmethod
    def resolve_params(cls, given: dict, size: str = "full") -> dict:
        """Also check the model and model_variant against the inner workload, before anything runs."""
        out = super().resolve_params(given, size)
        out["model_variant"] = cls.inner_class(out).canonical_variant(out["model_variant"])
        return out

    @classmethod
    def inner_class(cls, params: dict):
        models = registry.ddp_models()
        if params["model"] not in models:
            raise UserError(f"model={params['model']!r}: must be one of {', '.join(models)}")
        return models[params["model"]]

    @classmethod
    def inner_params(cls, params: dict) -> dict:
        given = {"batch_size": params["batch_size"]} if params["batch_size"] else {}
        return cls.inner_class(params).resolve_params(given, size=params["inner_size"])

    @classmethod
    def figures_for(cls, params: dict):
        """ddp-train's figures with those of the workload it wraps (extra() carries them)."""
        return compose(f"DDP{cls.inner_class(params).figures.__name__}", cls.figures, cls.inner_class(params).figures)

    @classmethod
    def wrapped(cls) -> list[type]:
        """The built-in workloads it can wrap, not the plugins': installing a plugin must not
        change ddp-train's fingerprint on that machine (a plugin's code is its own provenance)."""
        return [w for w in map(registry.get, registry.REGISTRY) if w.ddp_name]

    @classmethod
    def flops(cls, params: dict) -> float | None:
        return cls.inner_class(params).flops(cls.inner_params(params))

    @classmethod
    def param_count(cls, params: dict) -> int | None:
        return cls.inner_class(params).param_count(cls.inner_params(params))

    @classmethod
    def executed_precision(cls, variants: frozenset[str], arch: str | None,
                           params: dict | None = None) -> dict[str, str]:
        """The inner recipe's (model_variant); DDP itself changes no arithmetic."""
        p = cls.resolve_params(params or {})
        inner = cls.inner_class(p)
        return inner.executed_precision(inner.parse_variant(p["model_variant"]), arch, cls.inner_params(p))

    @classmethod
    def peak_precision(cls, variants: frozenset[str], arch: str | None, params: dict | None = None) -> str:
        p = cls.resolve_params(params or {})
        inner = cls.inner_class(p)
        return inner.peak_precision(inner.parse_variant(p["model_variant"]), arch, cls.inner_params(p))

    # --- setup ------------------------------------------------------------
    def setup(self) -> None:
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        if not dist.is_initialized():
            raise UserError("ddp-train runs under torchrun (launcher), not in a plain process")
        v = self.ctx.variants
        inner_cls = self.inner_class(self.p)
        inner_variants = inner_cls.parse_variant(self.p["model_variant"])
        if "no-sync" in v and "amp-fp16" in inner_variants:
            raise UserError("no-sync with amp-fp16: the gradient scaler would unscale every micro-step")
        inner_params = self.inner_params(self.p)
        ctx = type(self.ctx)(device=self.device, variants=inner_variants, params=inner_params,
                             rank=self.ctx.rank, world_size=self.ctx.world_size, notes=self.ctx.notes)
        self.inner = inner_cls(ctx)
        self.inner.setup()

        model = self.inner.model
        compiled = getattr(model, "_orig_mod", None)   # DDP goes inside torch.compile, not outside
        kwargs = {"bucket_cap_mb": self.p["bucket_cap_mb"]}
        if self.device.type == "cuda":
            kwargs["device_ids"] = [self.device.index]
        if "static-graph" in v:
            kwargs.update(gradient_as_bucket_view=True, static_graph=True)
        self.ddp = DDP(compiled if compiled is not None else model, **kwargs)
        if "fp16-compress" in v or "bf16-compress" in v:
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

            hook = default_hooks.fp16_compress_hook if "fp16-compress" in v else default_hooks.bf16_compress_hook
            self.ddp.register_comm_hook(dist.group.WORLD, hook)
        if compiled is not None:
            mode = "max-autotune" if "compile-max-autotune" in inner_variants else self.inner.p.get("compile_mode")
            self.inner.model = torch.compile(self.ddp, mode=None if mode in (None, "default") else mode)
        else:
            self.inner.model = self.ddp
        self.accum = self.p["accum_steps"] if "no-sync" in v else 1
        self.opt = _AccumulatingOptimizer(self.inner.opt)
        self.inner.opt = self.opt

    # --- one step -----------------------------------------------------------
    def _step(self, sync: bool) -> None:
        for i in range(self.accum):
            self.opt.first, self.opt.last = i == 0, i == self.accum - 1
            communicate = sync and i == self.accum - 1
            with contextlib.nullcontext() if communicate else self.ddp.no_sync():
                self.inner.step()

    def step(self) -> None:
        self._step(sync=True)

    def items_per_step(self) -> float:
        return self.inner.items_per_step() * self.accum

    def flops_per_item(self) -> float | None:
        return self.inner.flops_per_item()

    def precision(self) -> str:
        return self.inner.precision()

    def uses_compile(self) -> bool:
        return self.inner.uses_compile()

    def check(self) -> list[str]:
        return self.inner.check()

    # --- gradient-synchronisation cost -------------------------------------
    def extra(self) -> dict:
        """Exposed and total communication per optimizer step (see the module docstring)."""
        import torch.distributed as dist
        from torch.profiler import ProfilerActivity, profile

        timer = WindowTimer(self.device)
        steps = 1 if self.p["inner_size"] == "tiny" else PROFILED_STEPS   # tiny: CPU tests, keep it short
        sync_s, nosync_s = [], []
        for _ in range(2):   # interleaved, so a drift in clocks hits both alike
            dist.barrier()
            sync_s.append(timer.time(lambda: self._step(sync=True), steps) / steps)
            dist.barrier()
            nosync_s.append(timer.time(lambda: self._step(sync=False), steps) / steps)
        # Re-align the ranks' weights: the no_sync window stepped each rank's optimizer alone.
        for p in self.ddp.module.parameters():
            dist.broadcast(p.data, src=0)
        step_sync, step_nosync = min(sync_s), min(nosync_s)
        cuda = self.device.type == "cuda"
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        dist.barrier()
        with profile(activities=activities) as prof:
            for _ in range(steps):
                self._step(sync=True)
            timer.sync()
        total = comm_seconds(prof, cuda) / steps
        exposed = max(0.0, step_sync - step_nosync)
        out = {"model": self.p["model"], "inner_workload": self.inner.name,
               "inner_params": self.inner.p, "accum_steps": self.accum,
               "step_sync_s": step_sync, "step_nosync_s": step_nosync,
               "comm_exposed_s": exposed, "comm_total_s": total,
               "overlap_fraction": overlap_fraction(exposed, total)}
        out.update({k: v for k, v in self.inner.extra().items() if k not in out})
        return out

    @staticmethod
    def finalize(result: dict, per_rank: list[dict], world_size: int) -> None:
        """The job's communication figures: the mean over ranks (each rank waits for the others)."""
        extra = result["extra"]
        for key in ("comm_exposed_s", "comm_total_s", "step_nosync_s", "step_sync_s"):
            values = [(r.get("extra") or {}).get(key) for r in per_rank]
            if all(isinstance(x, (int, float)) for x in values):
                extra[key] = statistics.fmean(values)
        extra["overlap_fraction"] = overlap_fraction(extra.get("comm_exposed_s"), extra.get("comm_total_s"))
        if extra.get("step_sync_s"):
            extra["comm_exposed_share"] = extra["comm_exposed_s"] / extra["step_sync_s"]


def overlap_fraction(exposed: float | None, total: float | None) -> float | None:
    """Share of the communication hidden behind computation, in [0, 1]; None without a total."""
    if exposed is None or not total:
        return None
    return min(1.0, max(0.0, 1.0 - exposed / total))
