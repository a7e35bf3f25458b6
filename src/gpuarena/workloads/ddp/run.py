"""ddp-train's body: the inner workload under DDP, and the gradient-synchronisation figures (its facts
are in spec.py)."""

from __future__ import annotations

import contextlib
import statistics

import torch

from gpuarena.errors import UserError
from gpuarena.measure.profile import comm_seconds
from gpuarena.measure.timing import WindowTimer
from gpuarena.workloads.base import Workload
from gpuarena.workloads.ddp.spec import DDPTrainSpec, overlap_fraction

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


class DDPTrain(DDPTrainSpec, Workload):
    # --- setup ------------------------------------------------------------
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
        self.inner = inner_cls.body()(ctx)
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
