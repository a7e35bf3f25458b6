"""How a serving claim's GPUs are used (issue 39): ``--gpus N`` as one copy of the model in tensor
parallel, or with ``--replicas R`` as R independent copies (data parallel), each tensor parallel over
N / R GPUs.  Said in every verdict, so a per-node figure is never read as one layout silently."""

from __future__ import annotations

from dataclasses import dataclass

from gpuarena.errors import UserError


@dataclass(frozen=True)
class Layout:
    """How a serving claim's GPUs are used: ``replicas`` independent copies of the model (data
    parallel: each serves its own requests, nothing exchanged), each tensor parallel over
    gpus / replicas GPUs.  One copy over all of them (TP = gpus) unless replicas are given."""
    gpus: int = 1
    replicas: int = 1

    @property
    def tp(self) -> int:
        return self.gpus // self.replicas

    def text(self) -> str:
        if self.gpus == 1:
            return "1 GPU"
        if self.replicas == 1:
            return f"{self.gpus} GPUs as one copy in tensor parallel (TP={self.tp})"
        each = "one GPU each" if self.tp == 1 else f"TP={self.tp} each"
        return f"{self.gpus} GPUs as {self.replicas} independent copies (data parallel, {each})"


def layout(gpus: int, replicas=None) -> Layout:
    """The layout of ``gpus`` GPUs as ``replicas`` copies (None: one copy, tensor parallel); a
    UserError where the replicas are not a whole number >= 1 dividing the GPUs."""
    if replicas in (None, ""):
        return Layout(gpus, 1)
    try:
        r = float(replicas)
    except (TypeError, ValueError):
        r = float("nan")
    if not r >= 1 or r != int(r):
        raise UserError(f"--replicas {replicas}: a whole number of independent copies, at least 1")
    if gpus % int(r):
        raise UserError(f"--replicas {int(r)} does not divide --gpus {gpus}: each copy runs on gpus / replicas "
                        "GPUs (give --gpus as the GPUs of all copies together)")
    return Layout(gpus, int(r))
