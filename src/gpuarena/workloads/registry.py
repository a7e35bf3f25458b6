"""Workloads by name.  Entries are lazy "module:Class" strings (lm-eval's habit):
heavy libraries (transformers, diffusers) load only when their workload is used.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Iterable

from gpuarena.errors import UserError

# name -> "module:Class".  Adding a workload: one module plus one line here.
REGISTRY: dict[str, str] = {
    "resnet50-train": "gpuarena.workloads.resnet50:ResNet50Train",
    "ddp-train": "gpuarena.workloads.ddp:DDPTrain",
    "llm-train": "gpuarena.workloads.llm.train:LLMTrain",
    "allreduce": "gpuarena.workloads.collectives:AllReduce",
    "allgather": "gpuarena.workloads.collectives:AllGather",
    "reducescatter": "gpuarena.workloads.collectives:ReduceScatter",
    "broadcast": "gpuarena.workloads.collectives:Broadcast",
    "bert-large-infer": "gpuarena.workloads.bert:BertLargeInfer",
    "bert-large-train": "gpuarena.workloads.bert:BertLargeTrain",
    "sd15-generate": "gpuarena.workloads.sd15:SD15Generate",
    "llm-serve": "gpuarena.workloads.llm.serve:LLMServe",
    "resnet50-infer": "gpuarena.workloads.resnet50_infer:ResNet50Infer",
    "matmul": "gpuarena.workloads.micro:Matmul",
    "membw": "gpuarena.workloads.micro:MemBandwidth",
    "h2d": "gpuarena.workloads.micro:HostToDevice",
    "d2h": "gpuarena.workloads.micro:DeviceToHost",
}


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(str(name), list(choices), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def names() -> list[str]:
    return list(REGISTRY)


def get(name: str):
    """The workload class for a name; UserError with a suggestion if unknown."""
    if name not in REGISTRY:
        raise UserError(f"unknown workload {name!r}{did_you_mean(name, REGISTRY)}; "
                        f"known: {', '.join(REGISTRY)}")
    module, attr = REGISTRY[name].split(":")
    return getattr(importlib.import_module(module), attr)
