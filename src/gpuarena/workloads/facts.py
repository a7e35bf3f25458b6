"""What analysis and the report ask a workload class, beyond how it runs.

``WorkloadSpec`` (workloads/spec.py) inherits these facts and hooks, so a module elsewhere never
tests a workload's name: it asks the class (through the registry) which physics model judges it,
which device ceiling it measures, which published family it belongs to, how a published
row's text maps onto its parameters.  A new workload sets the ones that apply to it; the
defaults describe a plain single-GPU workload judged by the roofline.

None of these shape a measurement: they are outside a workload's fingerprint
(identity.ANALYSIS_ONLY, SCHEMA_ONLY), so refining one re-keys no stored result.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import ClassVar

from gpuarena.store.figures import Figures

# Which of gpuarena's models judges, projects and reports a workload:
#  "roofline"      per-item FLOPs at the executed precision's peak and bytes at bandwidth
#                  (analysis/physics/limits.py: check, advise, projection; the report's workload table);
#  "serving"       the LLM serving model: bytes per token, prefill FLOPs, tensor parallel
#                  (analysis/physics/serving_model.py; the report's serving section);
#  "decoder-training" MFU and parallel layouts (analysis/physics/llm_claims.py, llm_plan.py; the LLM section);
#  "data-parallel" a training workload wrapped in DDP over N ranks (analysis/physics/whatif.py; scaling);
#  "endpoint"      a served engine measured over HTTP (analysis/verbs/endpoints.py; its own section).
PHYSICS = ("roofline", "serving", "decoder-training", "data-parallel", "endpoint")
# The device ceiling a micro-benchmark or collective measures (analysis reads the best of each):
#  "compute-peak" dense matmul TFLOP/s by dtype; "memory-bandwidth" device copy GB/s;
#  "host-link" host<->device copy GB/s; "allreduce-busbw" all-reduce bus bandwidth over N ranks.
DEVICE_FIGURES = ("compute-peak", "memory-bandwidth", "host-link", "allreduce-busbw")


class WorkloadFacts:
    """The analysis-facing facts of a workload class, with their defaults."""

    physics: ClassVar[str] = "roofline"          # one of PHYSICS
    device_figure: ClassVar[str | None] = None   # one of DEVICE_FIGURES, or None
    # Published cross-GPU family (one engine measured on many GPUs by one publisher): the prefix of
    # its rows' workload text in data/published_results.csv, and the settings it was published at.
    published_family: ClassVar[str | None] = None
    family_settings: ClassVar[dict] = {}
    # A CSV of published figures for this workload (data/published_results.csv's columns, each row
    # with its source), relative to the workload's module: `gpuarena import --published` loads its
    # rows beside the shipped ones, so a plugin brings its own.  Rows are matched by published_as.
    published_csv: ClassVar[str | None] = None
    # Published figures the report's tuning ladder sets the best recipe against (names in
    # published_results.csv's workload column, any GPU count; e.g. MLPerf's offline ResNet-50).
    reference_as: ClassVar[tuple[str, ...]] = ()
    # The recipe change that makes the article's diverging recipe finite, as `run` options
    # (the report's first screen points at it when only NaN results were stored).
    finite_fix: ClassVar[str | None] = None
    # Order among siblings in a report table (the collectives: all-reduce first).
    report_order: ClassVar[int] = 0
    # The typed model of the figures extra() stores (store/figures.py): the runner refuses a new
    # result whose figures it does not declare, or declares with another type.  Outside the
    # fingerprint (identity.SCHEMA_ONLY): declaring a figure changes no measurement.
    figures: ClassVar[type[Figures]] = Figures
    # What each version bump changed: {version: predicate(variant parts, params)}, true for the results
    # of an earlier version whose timed code that version changed (llm/versions.py).  Analysis that
    # joins results across versions (the serving curves) reads it; none declared: every version apart.
    version_changes: ClassVar[dict] = {}

    @classmethod
    def figures_for(cls, params: dict) -> type[Figures]:
        """The model of one case's figures (ddp-train adds the figures of the workload it wraps)."""
        return cls.figures

    @classmethod
    def changed_since(cls, version: int | None, variants, params: dict) -> list[int] | None:
        """The later versions that changed what a result of ``version`` timed (``variants``: its
        variant's parts; ``params`` with ``batch_size`` the batch timed); [] when today's code times
        it alike.  None when that cannot be told: no table, or a version this installation lacks."""
        if version == cls.version:
            return []
        if not cls.version_changes or not isinstance(version, int) or not 1 <= version < cls.version:
            return None
        parts = frozenset(variants)
        return [w for w in range(version + 1, cls.version + 1)
                if w not in cls.version_changes or cls.version_changes[w](parts, params)]

    @classmethod
    def published_params(cls, setting: str) -> dict:
        """Parameters a published row states in its ``seq_len_or_resolution`` text ("384",
        "512x512, 50 steps"), beyond the batch size: those of this workload's params."""
        return {}

    @classmethod
    def published_csv_path(cls) -> Path | None:
        """Where ``published_csv`` lies, or None."""
        if not cls.published_csv:
            return None
        return Path(sys.modules[cls.__module__].__file__).parent / cls.published_csv

    @classmethod
    def label(cls, params: dict) -> str:
        """A result's short name in a health check: the name, plus what sets its ceiling apart
        (a matmul's dtype, a host copy's pinning)."""
        return cls.name


def first_int(text: str) -> int | None:
    """The leading whole number of a published setting ("384", "224 px"), or None."""
    m = re.match(r"\s*(\d+)", text or "")
    return int(m.group(1)) if m else None


def steps_in(text: str) -> int | None:
    """The step count a published setting states ("512x512, 50 steps"), or None."""
    m = re.search(r"(\d+)\s*steps", text or "")
    return int(m.group(1)) if m else None


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
