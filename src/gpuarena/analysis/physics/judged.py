"""Which workloads a physics judges: the one module that reads a workload's declared physics
(``WorkloadFacts.physics``).  The physics objects (models.py) answer ``judges`` and ``workloads``
through it, and so do the physics implementations below them, which models.py imports while it
builds its objects (whatif, the serving and training evidence), so none of them imports models.py
back."""

from __future__ import annotations

from gpuarena.workloads import registry


def judges(physics: str, workload: str | None) -> bool:
    """Whether the named physics judges the workload of that name (False for a name this installation
    lacks, or none): how rows are picked by what a workload is, never by its name."""
    return registry.has(workload, physics=physics)


def workloads(physics: str) -> list[str]:
    """The workloads the named physics judges, built-ins first."""
    return registry.named(physics=physics)
