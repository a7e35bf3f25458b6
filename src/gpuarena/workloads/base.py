"""What a workload is.

A workload is a small class (optimum-benchmark's and TorchBench's habit):
``setup()`` builds the model and data on the device, ``step()`` does one unit
of work (a training step, an inference batch, one pipeline call, one matmul),
``items_per_step()`` says how many items that was, ``flops_per_item()`` how
much arithmetic each item costs.  The runner (runner/child.py) owns warm-up,
timing, telemetry and statistics; a workload never times itself.

Adding a workload is one module in this folder plus one line in registry.py.
"""

from __future__ import annotations

import hashlib
import inspect
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from gpuarena.errors import UserError


@dataclass(frozen=True)
class Param:
    """One tunable of a workload, documented where it is declared."""

    name: str
    type: type
    default: Any
    doc: str
    tiny: Any = None          # value at size=tiny (CPU tests); None: same as default
    min: float | None = None
    max: float | None = None
    choices: tuple | None = None

    def parse(self, raw: Any) -> Any:
        """Coerce and range-check one value; raise UserError with a one-line reason."""
        try:
            if self.type is bool and isinstance(raw, str):
                low = raw.strip().lower()
                if low not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                    raise ValueError(raw)
                value = low in ("1", "true", "yes", "on")
            elif self.type is int and isinstance(raw, float) and not raw.is_integer():
                raise ValueError(raw)
            elif self.type is int and isinstance(raw, bool):
                raise ValueError(raw)
            else:
                value = self.type(raw)
        except (TypeError, ValueError):
            raise UserError(f"{self.name}={raw!r}: expected {self.type.__name__}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise UserError(f"{self.name}={raw!r}: must be a finite number")
        if self.min is not None and value < self.min:
            raise UserError(f"{self.name}={value}: must be >= {self.min:g}")
        if self.max is not None and value > self.max:
            raise UserError(f"{self.name}={value}: must be <= {self.max:g}")
        if self.choices is not None and value not in self.choices:
            raise UserError(f"{self.name}={value!r}: must be one of {', '.join(map(str, self.choices))}")
        return value


@dataclass
class StepContext:
    """What the runner hands a workload: where to run and with which recipe."""

    device: Any               # torch.device
    variants: frozenset[str]  # the composed recipe, e.g. {"amp-bf16", "channels-last"}
    params: dict[str, Any]
    rank: int = 0
    world_size: int = 1
    notes: list[str] = field(default_factory=list)  # things the workload wants stored as warnings


class Workload(ABC):
    """Base class.  Subclasses set the ClassVars and implement setup/step."""

    name: ClassVar[str]
    version: ClassVar[int] = 1            # bump when the definition (not the speed) changes
    description: ClassVar[str] = ""
    item: ClassVar[str] = "item"          # "image", "sequence", "GB" ...
    unit: ClassVar[str | None] = None     # throughput unit; None: f"{item}s/s" (see unit_name)
    source: ClassVar[str] = ""            # where the recipe comes from (article section)
    # The figure the source article reports, which every table, tile and cost row leads with:
    # "throughput" (items/s) or "latency_s_per_item" (seconds per item, the inverse).
    headline: ClassVar[str] = "throughput"
    params: ClassVar[tuple[Param, ...]] = ()
    variants: ClassVar[dict[str, str]] = {"seed": "as the source article wrote it"}
    # Groups of variants of which at most one may be chosen (e.g. the precisions).
    exclusive: ClassVar[tuple[frozenset[str], ...]] = ()
    # Variants that must stand alone.
    alone: ClassVar[frozenset[str]] = frozenset({"seed"})
    launcher: ClassVar[str] = "process"   # "process" (one child) or "torchrun" (N ranks)
    default_warmup: ClassVar[int] = 5
    default_steps: ClassVar[int] = 10     # steps in each timed repeat window
    tiny_warmup: ClassVar[int] = 1
    tiny_steps: ClassVar[int] = 2

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
        return None

    def precision(self) -> str:
        """The precision the arithmetic runs at, for the share-of-peak figure."""
        return precision_of(self.ctx.variants, self.ctx.device)

    def check(self) -> list[str]:
        """After timing: flags such as 'output is NaN'.  Empty when all is well."""
        return []

    def extra(self) -> dict:
        """Workload-specific figures to store with the result (JSON-able)."""
        return {}

    def uses_compile(self) -> bool:
        return any(v.startswith("compile") for v in self.ctx.variants)

    # --- class-level helpers --------------------------------------------
    @classmethod
    def param_map(cls) -> dict[str, Param]:
        return {p.name: p for p in cls.params}

    @classmethod
    def resolve_params(cls, given: dict[str, Any], size: str = "full") -> dict[str, Any]:
        """Defaults (or tiny defaults) overlaid with given values, each validated."""
        pm = cls.param_map()
        unknown = sorted(set(given) - set(pm))
        if unknown:
            from gpuarena.workloads.registry import did_you_mean

            k = unknown[0]
            raise UserError(f"{cls.name} has no parameter {k!r}{did_you_mean(k, pm)}; "
                            f"it has: {', '.join(pm) or 'none'}")
        out = {}
        for p in cls.params:
            base = p.tiny if (size == "tiny" and p.tiny is not None) else p.default
            out[p.name] = p.parse(given[p.name]) if p.name in given else base
        return out

    @classmethod
    def parse_variant(cls, spec: str) -> frozenset[str]:
        """'amp-bf16+channels-last' -> frozenset, checked for unknown and clashing parts."""
        parts = [s.strip() for s in str(spec).split("+") if s.strip()]
        if not parts:
            raise UserError(f"empty variant for {cls.name}")
        for part in parts:
            if part not in cls.variants:
                from gpuarena.workloads.registry import did_you_mean

                raise UserError(f"{cls.name} has no variant {part!r}{did_you_mean(part, cls.variants)}; "
                                f"it has: {', '.join(cls.variants)}")
        chosen = frozenset(parts)
        if len(chosen) != len(parts):
            raise UserError(f"variant {spec!r} repeats a part")
        if len(chosen) > 1:
            lonely = chosen & cls.alone
            if lonely:
                raise UserError(f"variant {sorted(lonely)[0]!r} of {cls.name} does not combine with others")
            for group in cls.exclusive:
                both = chosen & group
                if len(both) > 1:
                    raise UserError(f"variants {' and '.join(sorted(both))} of {cls.name} exclude each other")
        return chosen

    @classmethod
    def canonical_variant(cls, spec: str) -> str:
        chosen = cls.parse_variant(spec)
        order = list(cls.variants)
        return "+".join(sorted(chosen, key=order.index))

    @classmethod
    def unit_name(cls, params: dict | None = None) -> str:
        """The stored throughput unit: ``unit`` if set ("GB/s" reads better than "GBs/s").
        ``params`` lets a wrapper (ddp-train) name its inner workload's unit."""
        return cls.unit or f"{cls.item}s/s"

    @classmethod
    def code_hash(cls) -> str:
        """Hash of the workload's source and version: results of edited workloads are not compared."""
        try:
            src = inspect.getsource(inspect.getmodule(cls))
        except (OSError, TypeError):
            src = cls.__qualname__
        return hashlib.sha256(f"{cls.name}:{cls.version}:{src}".encode()).hexdigest()[:16]


# --- shared recipe helpers ------------------------------------------------

# Parameters that act only through some parts of a recipe (named alike in every workload):
# results that differ in them alone measured one setting with different recipes, so the
# report's tuning ladder sets them against the same seed, labelled "variant (name=value)".
SCOPED_PARAMS: dict[str, tuple[str, ...]] = {
    "compile_mode": ("compile",),
    "compile_scope": ("compile", "compile-max-autotune"),
}


def param_acts(name: str, variant: str) -> bool:
    """Whether a parameter changes what `variant` measures: always, unless it is recipe-scoped
    (SCOPED_PARAMS) and the variant lacks every part it acts through."""
    return name not in SCOPED_PARAMS or bool(set(variant.split("+")) & set(SCOPED_PARAMS[name]))

PRECISION_VARIANTS = ("fp32", "tf32", "amp-bf16", "amp-fp16", "bf16", "fp16")


def precision_of(variants: frozenset[str], device=None) -> str:
    """Name of the arithmetic precision a recipe runs at.

    ``seed`` is PyTorch's default: FP32 matmuls (TF32 off), but cuDNN convolutions
    in TF32 on Ampere and newer -- reported as "default" so it is not confused with either.
    """
    for v in ("amp-bf16", "bf16"):
        if v in variants:
            return "bf16"
    for v in ("amp-fp16", "fp16"):
        if v in variants:
            return "fp16"
    if "tf32" in variants:
        return "tf32"
    if "fp32" in variants:
        return "fp32"
    return "default"


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
