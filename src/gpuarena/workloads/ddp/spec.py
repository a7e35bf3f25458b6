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

from typing import Optional

from pydantic import Field

from gpuarena.errors import UserError
from gpuarena.store.figures import Name, Params, Seconds, Share, compose
from gpuarena.workloads import registry
from gpuarena.workloads.figures import Communication
from gpuarena.workloads.spec import Param, WorkloadSpec


class DDPFigures(Communication):
    """ddp-train; the wrapped workload's own figures come with it (DDPTrain.figures_for)."""

    model: Name = None
    inner_workload: Name = None
    inner_params: Params = None
    accum_steps: Optional[int] = Field(None, ge=1, le=1_000_000)
    step_sync_s: Seconds = None
    step_nosync_s: Seconds = None
    overlap_fraction: Share = None


class DDPTrainSpec(WorkloadSpec):
    name = "ddp-train"
    runner = "gpuarena.workloads.ddp.run:DDPTrain"
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


def overlap_fraction(exposed: float | None, total: float | None) -> float | None:
    """Share of the communication hidden behind computation, in [0, 1]; None without a total."""
    if exposed is None or not total:
        return None
    return min(1.0, max(0.0, 1.0 - exposed / total))
