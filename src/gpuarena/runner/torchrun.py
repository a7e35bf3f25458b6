"""Launching a multi-rank case through torchrun (PyTorch's own launcher, not one of ours).

The executor calls :func:`command` for a workload whose ``launcher`` is
"torchrun": torchrun starts ``case.gpus`` ranks of ``gpuarena.runner.rank`` on
this host; rank 0 gathers their measurements and writes the one result file.
torchrun runs in the executor's process group, so the case's time limit kills
it and every rank it started.

Multi-node: the rendezvous options given to ``gpuarena run --torchrun-arg``
(``--nnodes``, ``--rdzv-endpoint``, ``--rdzv-backend``, ``--rdzv-id``,
``--node-rank``) travel in the environment variable GPUARENA_TORCHRUN_ARGS and
replace ``--standalone`` (see docs/multi-gpu.md).
"""

from __future__ import annotations

import os
import shlex
import sys

from gpuarena.errors import UserError
from gpuarena.spec.model import Case

ARGS_ENV = "GPUARENA_TORCHRUN_ARGS"
# What a node other than node 0 hands its executor for a multi-node case: node 0 stores the result.
ELSEWHERE = "elsewhere"

# The torchrun options a user may pass through: rendezvous and node placement only.
# Everything else (nproc_per_node, the entry point, restarts) is ours to set.
PASS_THROUGH = ("--nnodes", "--rdzv-endpoint", "--rdzv_endpoint", "--rdzv-backend", "--rdzv_backend",
                "--rdzv-id", "--rdzv_id", "--node-rank", "--node_rank", "--master-addr", "--master_addr",
                "--master-port", "--master_port", "--rdzv-conf", "--rdzv_conf")

# Every rank must see these (torchrun hands its environment to the ranks; the
# executor's child_env sets NCCL_NVLS_ENABLE).  NVLink multicast (NVLS) stays off
# on the lent machines; the other two switch off the same hardware path in
# PyTorch's symmetric memory and in NVSHMEM.
RANK_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def parse_args(items: list[str]) -> list[str]:
    """Validate --torchrun-arg values ('--nnodes=2' or '--nnodes 2'); return torchrun's argv words."""
    words: list[str] = []
    for item in items:
        words += shlex.split(item)
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        name = word.split("=", 1)[0]
        if name not in PASS_THROUGH:
            raise UserError(f"--torchrun-arg {word!r}: only rendezvous options pass through "
                            f"({', '.join(o for o in PASS_THROUGH if '_' not in o)})")
        if "=" in word:
            out.append(word)
            i += 1
        elif i + 1 < len(words) and not words[i + 1].startswith("--"):
            out += [word, words[i + 1]]
            i += 2
        else:
            raise UserError(f"--torchrun-arg {word!r}: needs a value, e.g. {name}=VALUE")
    return out


def export_args(items: list[str]) -> None:
    """Put validated pass-through options where command() (and every later case) finds them."""
    if items:
        os.environ[ARGS_ENV] = shlex.join(parse_args(items))


def pass_through() -> list[str]:
    return parse_args([os.environ[ARGS_ENV]]) if os.environ.get(ARGS_ENV, "").strip() else []


def multi_node(args: list[str]) -> bool:
    for i, word in enumerate(args):
        name, _, value = word.partition("=")
        if name == "--nnodes":
            value = value or (args[i + 1] if i + 1 < len(args) else "1")
            return value.split(":")[-1] != "1"
    return False


def command(case: Case, case_path: str, result_path: str) -> list[str]:
    """torchrun's command line for one case: case.gpus ranks per node."""
    for key, value in RANK_ENV.items():
        os.environ.setdefault(key, value)   # the executor copies os.environ into the child's env
    user = pass_through()
    # --standalone: a c10d rendezvous on localhost with a free port torchrun picks itself.
    rdzv = user if user else ["--standalone"]
    return [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(case.gpus),
            *rdzv, "--max-restarts", "0", "--monitor-interval", "0.5",
            "-m", "gpuarena.runner.rank", case_path, result_path]


def fit_to_host(cases: list[Case], device: str) -> tuple[list[Case], list[str]]:
    """Drop cases that ask for more GPUs than this host has (on cuda, single node).

    Returns the cases to run and one warning line per count dropped.  On the CPU
    a rank is a process, so any count runs (slowly).
    """
    if not device.startswith("cuda") or multi_node(pass_through()):
        return cases, []
    import torch

    have = torch.cuda.device_count()
    keep = [c for c in cases if c.gpus <= have]
    dropped = sorted({c.gpus for c in cases if c.gpus > have})
    notes = [f"skipping {sum(c.gpus == n for c in cases)} case(s) at gpus={n}: this host has {have} GPU(s)"
             for n in dropped]
    if cases and not keep:
        raise UserError(f"every case asks for more GPUs than the {have} present "
                        f"(--gpus {','.join(map(str, dropped))})")
    return keep, notes
