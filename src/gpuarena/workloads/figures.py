"""The figure models several workloads share (torch-free): each workload's own model lies beside its
spec (workloads/<name>/spec.py, named by its class's ``figures``) and subclasses ``Figures``
(store/figures.py, the runner's keys) directly or through one of these."""

from __future__ import annotations

from typing import Annotated, Optional

from pydantic import Field

from gpuarena.store.figures import Figures, Name, Rate, Record, Records, Seconds, Share, Text  # noqa: F401 - re-exported

Batch = Annotated[Optional[int], Field(ge=1, le=1 << 40)]


class Quantized(Figures):
    """workloads/quant.py: what a quantization rung did, and how far its output lies from FP32's."""

    quantization: Text = None
    quantized_layers: Record = None
    torchao_accuracy: Text = None
    accuracy: Record = None


class Capacity(Figures):
    """workloads/capacity.py: the largest batch that fits (max-batch searches)."""

    max_batch: Optional[int] = Field(None, ge=0, le=1 << 40)
    tries: Records = None
    capped: Optional[bool] = None


class Communication(Figures):
    """Communication per step of a multi-rank training job (measure/profile.py)."""

    comm_exposed_s: Seconds = None
    comm_total_s: Seconds = None
    comm_exposed_share: Share = None
