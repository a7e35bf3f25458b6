"""What a workload is.

A workload is a small class (optimum-benchmark's and TorchBench's habit):
``setup()`` builds the model and data on the device, ``step()`` does one unit
of work (a training step, an inference batch, one pipeline call, one matmul),
``items_per_step()`` says how many items that was, ``flops_per_item()`` how
much arithmetic each item costs.  The runner (runner/child.py) owns warm-up,
timing, telemetry and statistics; a workload never times itself.

Everything else a workload *is* -- its kind, the axis a report plots, how ranks combine,
its FLOPs and parameter count as functions of its params, the precision each recipe
executes -- is declared on its torch-free spec (``WorkloadSpec``, workloads/spec.py), which
``Workload`` subclasses, so analysis and the report ask the spec (through the registry)
without importing torch.  docs/workloads.md walks through adding one: a built-in is one
folder here (spec.py, run.py) plus one line in registry.py; a plugin is a package with one
``gpuarena.workloads`` entry point.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from gpuarena.store.figures import Figures  # noqa: F401 - re-exported: a workload's figures model subclasses it
from gpuarena.workloads.facts import SCOPED_PARAMS, WorkloadFacts, param_acts  # noqa: F401 - re-exported
from gpuarena.workloads.param import Param  # noqa: F401 - re-exported: workloads import it from here
from gpuarena.workloads.precision import PRECISION_VARIANTS, precision_of  # noqa: F401 - re-exported
from gpuarena.workloads.spec import (KINDS, RANK_AGGREGATES, WorkloadSpec,  # noqa: F401 - re-exported
                                     activation_traffic)


@dataclass
class StepContext:
    """What the runner hands a workload: where to run and with which recipe."""

    device: Any               # torch.device
    variants: frozenset[str]  # the composed recipe, e.g. {"amp-bf16", "channels-last"}
    params: dict[str, Any]
    rank: int = 0
    world_size: int = 1
    notes: list[str] = field(default_factory=list)  # things the workload wants stored as warnings


class Workload(WorkloadSpec, ABC):
    """The runnable body: the spec's facts (inherited) and setup/step.  A built-in's body subclasses
    its spec (``class ResNet50Train(ResNet50TrainSpec, Workload)``); a plugin may give one class."""

    runs = True                           # a body: setup/step (spec.py knows one by this)

    def __init__(self, ctx: StepContext):
        self.ctx = ctx
        self.p = ctx.params
        self.device = ctx.device

    # --- what a subclass implements -------------------------------------
    def setup(self) -> None:
        """Build the model and inputs on ctx.device.  Not timed."""

    @abstractmethod
    def step(self) -> None:
        """One unit of work: a training step, an inference batch, one pipeline call."""

    def items_per_step(self) -> float:
        return float(self.p.get("batch_size", 1))

    def flops_per_item(self) -> float | None:
        """Floating-point operations per item (multiply-add = 2), or None if unknown."""
        return self.flops(self.p)

    def precision(self) -> str:
        """The precision the arithmetic runs at, for the share-of-peak figure."""
        return precision_of(self.ctx.variants, self.ctx.device)

    def check(self) -> list:
        """After timing: what deserves caution, as flags (store/flags.py: nan_flag("output has
        NaN/inf") for a computation that stopped being finite) or plain text.  Empty when all is well."""
        return []

    def extra(self) -> dict:
        """Workload-specific figures to store with the result (JSON-able), each declared, with
        its type, in the class's ``figures`` model (store/figures.py)."""
        return {}

    def uses_compile(self) -> bool:
        return any(v.startswith("compile") for v in self.ctx.variants)

    @staticmethod
    def finalize(result: dict, per_rank: list[dict], world_size: int) -> None:
        """After runner/rank.py combined the ranks: add the job-wide figures to result['extra']."""


# --- shared recipe helpers ------------------------------------------------

def apply_math_mode(variants: frozenset[str]) -> None:
    """Set the global TF32 switches the way a recipe asks.

    seed: leave PyTorch's defaults (matmul TF32 off, cuDNN TF32 on).
    fp32: both off (true FP32).  tf32, amp-*: both on (the article's tip).
    """
    import torch

    if "fp32" in variants:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    elif variants & {"tf32", "amp-bf16", "amp-fp16", "bf16", "fp16"}:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True


def backward_and_step(loss, opt, scaler=None) -> None:
    """Backward pass and optimizer step, through a GradScaler when fp16 autocast needs one."""
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    else:
        loss.backward()
        opt.step()


def autocast_dtype(variants: frozenset[str]):
    import torch

    if "amp-bf16" in variants:
        return torch.bfloat16
    if "amp-fp16" in variants:
        return torch.float16
    return None
