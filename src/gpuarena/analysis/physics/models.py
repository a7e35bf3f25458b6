"""Each physics gpuarena judges by, one object, registered once: a workload class names its physics
(``WorkloadFacts.physics``), and every verb asks that object instead of switching on the name.

- ``roofline``: per-item FLOPs at the executed precision's peak and bytes at bandwidth, bounded by the
  credible shares of analysis/physics/credible.py (analysis/physics/limits.py, check.py);
- ``serving``: weights and KV cache read per token, prefill FLOPs, tensor parallel or replicas, capacity
  (analysis/physics/serving_model.py, serving_claims.py);
- ``decoder-training``: MFU from evidence by model size, GPU and layout, FP8 bounded by its parts
  (analysis/physics/llm_efficiency.py, llm_claims.py, llm_plan.py);
- ``data-parallel``: a training step wrapped in DDP, its all-reduce on the interconnect model
  (analysis/physics/whatif.py; its claims are scaling coefficients, judged by the roofline's check);
- ``endpoint``: a served engine measured over HTTP, expected from the serving model at its concurrency.

Each object answers ``check`` (a claim -> a verdict row) and ``expected`` (a stored result -> the
physics' figure with its band, analysis/physics/expected_physics.py), says which plan ``advise`` and
``whatif`` make for its workloads (``plan``: the catalog ranking and the data-parallel model, the
serving model, or the training plan) and which workloads it judges (``judges``, ``workloads``): the one
place that reads a workload's declared physics.  A micro-benchmark or collective is
judged by the device figure it measures (analysis/physics/micro_check.py), whatever its physics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpuarena.analysis.physics import expected_physics as E, judged
from gpuarena.analysis.physics.llm_claims import check_training
from gpuarena.analysis.physics.roofline_check import check_roofline
from gpuarena.analysis.physics.serving_claims import check_serving
from gpuarena.errors import UserError
from gpuarena.workloads import registry


@dataclass(frozen=True)
class Physics:
    name: str
    what: str                                  # one line: what bounds a workload under this physics
    check: Callable[[dict, object], dict]      # (claim, store) -> verdict row
    expected: Callable | None                  # (result, gpu, pool) -> {"value", "band", "how"} | None
    plan: str = "catalog"                      # what advise and whatif plan with: one of PLANS

    def judges(self, workload: str | None) -> bool:
        """Whether this physics judges the workload of that name (False for a name this installation lacks,
        or none): how rows are picked by what a workload is, never by its name."""
        return judged.judges(self.name, workload)

    def workloads(self) -> list[str]:
        """The workloads this physics judges, built-ins first."""
        return judged.workloads(self.name)


# What `advise` and `whatif` do for a physics' workloads:
#  catalog: advise ranks the catalog like for like (analysis/verbs/advise.py), whatif runs the
#           data-parallel model (analysis/physics/whatif.py);
#  serving: advise runs the serving model (what fits, TTFT, tokens/s); whatif refuses: serving on N GPUs
#           is tensor parallel, which advise and check model;
#  training: advise and whatif make the LLM training plan (analysis/physics/llm_plan.py).
PLANS = ("catalog", "serving", "training")


PHYSICS: dict[str, Physics] = {p.name: p for p in (
    Physics("roofline", "FLOPs at the executed precision's peak and bytes at bandwidth, at credible shares",
            check_roofline, E.roofline),
    Physics("serving", "weights and KV cache read per token, prefill FLOPs; capacity sets the largest batch",
            check_serving, E.serving, "serving"),
    Physics("decoder-training", "model FLOPs per token at an MFU from evidence by model size, GPU and layout",
            check_training, E.decoder_training, "training"),
    Physics("data-parallel", "one GPU's step plus the all-reduce the step cannot hide",
            check_roofline, E.data_parallel),
    Physics("endpoint", "the serving model at the concurrency measured over HTTP",
            check_roofline, E.endpoint),
)}


ROOFLINE, SERVING, DECODER_TRAINING, DATA_PARALLEL, ENDPOINT = (PHYSICS[n] for n in (
    "roofline", "serving", "decoder-training", "data-parallel", "endpoint"))


def of(workload: str | None) -> Physics:
    """The physics object that judges a workload (a name this installation lacks: refused)."""
    cls = registry.get(workload) if workload else None
    if cls is None:
        raise UserError("a claim needs its workload")
    try:
        return PHYSICS[cls.physics]
    except KeyError:
        raise UserError(f"workload {workload!r} declares physics {cls.physics!r}, which gpuarena does not know "
                        f"(one of {', '.join(PHYSICS)})") from None
