"""What a workload is, without running it (torch-free).

``WorkloadSpec`` holds every fact of a workload class that planning, analysis and the report
read -- its name, kind, params and variants, the axis a report plots, how ranks combine, its
FLOPs and parameter count as functions of its params, the precision each recipe executes, the
checks run before any case exists -- and the class helpers built on them (resolve_params,
parse_variant ...).  ``Workload`` (workloads/base.py) adds what runs: setup/step/extra/check.
A built-in workload is a folder: ``spec.py`` (a WorkloadSpec subclass, whose ``runner`` names the
body) and ``run.py`` (the Workload subclass, which subclasses the spec); the registry maps names
to specs, so read-only verbs never import torch.  docs/workloads.md walks through adding one.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

from gpuarena import identity
from gpuarena.errors import UserError, did_you_mean
from gpuarena.store.figures import Figures  # noqa: F401 - re-exported: a workload's figures model subclasses it
from gpuarena.workloads import precision as _precision
from gpuarena.workloads.facts import SCOPED_PARAMS, WorkloadFacts, param_acts  # noqa: F401 - re-exported
from gpuarena.workloads.param import Param  # noqa: F401 - re-exported: workloads import it from here
from gpuarena.workloads.precision import PRECISION_VARIANTS, precision_of  # noqa: F401 - re-exported

KINDS = ("training", "inference", "generation", "collective", "micro")
RANK_AGGREGATES = ("sum", "mean", "min")


class WorkloadSpec(WorkloadFacts):
    """What a workload is, torch-free: its ClassVars and class methods.  A built-in's spec names its
    runnable body (``runner``, "module:Class", a ``Workload`` subclass); a ``Workload`` subclass is
    its own body."""

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
    default_repeats: ClassVar[int | None] = None  # timed repeat windows; None: the runner's default
    tiny_warmup: ClassVar[int] = 1
    tiny_steps: ClassVar[int] = 2

    # --- facts about the workload (read by analysis and the report) --------
    kind: ClassVar[str]                   # one of KINDS
    trains: ClassVar[bool]                # derived from kind (see __init_subclass__)
    axis: ClassVar[str | None] = None     # the parameter a report plots on x (batch_size, size_mb)
    rank_aggregate: ClassVar[str] = "sum"  # how ranks' throughputs combine: sum | mean | min
    rank_extra: ClassVar[tuple[str, ...]] = ()   # extra() keys kept per rank in extra.per_rank
    published_as: ClassVar[tuple[str, ...]] = ()  # names published rows use for this work
    ddp_name: ClassVar[str | None] = None  # the short name ddp-train wraps it under
    multi_gpu: ClassVar[bool]             # runs on N ranks; derived from launcher unless set
    dominant_op: ClassVar[str] = "matmul"  # op class whose precision sets the peak (precision.OP_CLASSES)
    # Where a workload's GPU ranking comes from when the generic one (compute and traffic per item,
    # analysis/physics/projection.py) would mislead: None, or the command that ranks it instead.
    advised_by: ClassVar[str | None] = None
    # True on workloads/base.py's Workload, so on every body (setup/step): spec.py sits below base.py
    # and knows a body by this declaration, never by importing it.
    runs: ClassVar[bool] = False
    # The runnable body: "module:Class" of the Workload subclass with setup/step (workloads/base.py).
    # None: the class is its own body (a Workload subclass), as a one-class plugin is.
    runner: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.trains = getattr(cls, "kind", None) == "training"
        if "multi_gpu" not in vars(cls):
            cls.multi_gpu = cls.launcher == "torchrun"

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

    # --- planning checks: run before any case exists (spec/model.py, cli/run_guard.py) ---
    @classmethod
    def check_params(cls, params: dict) -> None:
        """Refuse resolved params that cannot run (UserError), e.g. a path parameter naming no file.
        Each Param is already in its bounds; this is for what one value alone cannot say."""

    @classmethod
    def check_layout(cls, params: dict, gpus: int) -> None:
        """Refuse a parallel layout that cannot fit ``gpus`` ranks (UserError), e.g. tensor
        parallel of 4 on 2 GPUs.  Single-GPU workloads have none."""

    @classmethod
    def check_variant(cls, variants: frozenset[str], params: dict) -> None:
        """Refuse resolved params that ask a variant for what it does not do (UserError)."""

    # --- pure facts: no model is built, nothing runs ----------------------
    @classmethod
    def flops(cls, params: dict) -> float | None:
        """FLOPs per item for resolved params (multiply-add = 2), or None if not countable."""
        return None

    @classmethod
    def param_count(cls, params: dict) -> int | None:
        """Trainable parameters of the model for resolved params, or None (no model)."""
        return None

    @classmethod
    def bytes_per_item(cls, params: dict, element_bytes: int) -> float | None:
        """Estimated DRAM traffic per item at ``element_bytes`` per activation element, or None.

        The memory side of the roofline in analysis/physics/limits.py: no stored figure depends on
        it, so it is outside the fingerprint (identity.ANALYSIS_ONLY).  See activation_traffic."""
        return None

    @classmethod
    def executed_precision(cls, variants: frozenset[str], arch: str | None,
                           params: dict | None = None) -> dict[str, str]:
        """The precision the math runs at per op class (matmul, conv, attention, elementwise).
        ``arch``: catalog architecture family lower case ("ampere", "hopper"...), "cpu", or
        None (unknown: a CUDA GPU of Ampere or newer).  See workloads/precision.py."""
        return _precision.executed(variants, arch)

    @classmethod
    def peak_precision(cls, variants: frozenset[str], arch: str | None, params: dict | None = None) -> str:
        """The precision whose peak bounds this recipe: that of the dominant op class."""
        ex = cls.executed_precision(variants, arch, params)
        return ex.get(cls.dominant_op) or ex.get("matmul") or "n/a"

    @classmethod
    def wrapped(cls) -> list[type]:
        """Workloads this one runs inside itself (ddp-train): part of its identity."""
        return []

    @classmethod
    def body(cls) -> type:
        """The runnable class (setup/step): this class when it is a ``Workload``, else the one
        ``runner`` names, imported now (it may import torch).  ValueError when that is no
        ``Workload`` of the same name."""
        if cls.runs:
            return cls
        if not isinstance(cls.runner, str) or ":" not in cls.runner:
            raise ValueError(f"{cls.name}: runner={cls.runner!r} is not 'module:Class' (nor is the class a Workload)")
        module, attr = cls.runner.split(":", 1)
        found = getattr(importlib.import_module(module), attr)
        if not (isinstance(found, type) and issubclass(found, WorkloadSpec) and found.runs is True):
            raise ValueError(f"{cls.name}: runner {cls.runner} is not a gpuarena.workloads.base.Workload subclass")
        if getattr(found, "name", None) != cls.name:
            raise ValueError(f"{cls.name}: runner {cls.runner} declares name={getattr(found, 'name', None)!r}")
        return found

    @classmethod
    def fingerprint(cls) -> str:
        """Hash of the workload's own definition, its spec and its body (see gpuarena/identity.py);
        provenance only.  Loads the body."""
        body = cls.body()
        return identity.fingerprint(body, (runnable_base(body), WorkloadSpec), cls.wrapped())

    @classmethod
    def code_hash(cls) -> str:
        """Stored in the results' code_hash column: the fingerprint."""
        return cls.fingerprint()


def runnable_base(cls: type) -> type:
    """workloads/base.py's Workload on a body's ancestry: the first class that declares ``runs = True``."""
    return next(c for c in reversed(cls.__mro__) if vars(c).get("runs") is True)


# --- shared recipe helpers (facts) ----------------------------------------

def activation_traffic(elements: float, element_bytes: int, trains: bool, params: int, batch: int) -> float:
    """Bytes per item: each activation element written and read once in inference; in training
    also read again by the backward pass and its gradient written and read (five passes); the
    weights once per step in inference, and in training FP32 master weights, gradients and
    optimizer state read and written (7 x 4 bytes per parameter per step), spread over the batch.
    A lower estimate: fused kernels skip some passes, a cache-resident working set others."""
    passes = 5 if trains else 2
    weights = params * (28 if trains else element_bytes)
    return passes * elements * element_bytes + weights / max(1, batch)
