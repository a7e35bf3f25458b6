"""The network between nodes of an LLM-training plan: per GPU, GB/s in one direction.

The catalog names GPUs, not systems, so a figure exists only for the cards NVIDIA ships in its
own DGX systems, whose compute fabric has one adapter per GPU; any other card (a PCIe L40S, an
HGX H800 in whatever server) is given one with ``--busbw`` (GB/s across the nodes, what an
all-reduce across them reaches per GPU), or a plan above one node is refused.  Within one node
NVLink or PCIe joins the GPUs (llm_plan._links) and no network figure is needed.
"""

from __future__ import annotations

from gpuarena.data import catalog
from gpuarena.errors import UserError

GPUS_PER_NODE = 8
_DGX_A100 = (25.0, "DGX A100: eight Mellanox 200 Gb/s HDR InfiniBand adapters, one per GPU "
                   "(https://geektopia.es/es/technology/2020/05/14/noticias/nvidia-anuncia-el-servidor-dgx-a100-"
                   "ocho-tesla-a100-desde-200-000-dolares.html; Selene's DGX A100s on HDR InfiniBand, "
                   "https://gpt3demo.com/apps/mt-nlg-by-microsoft-and-nvidia-ai)")
_DGX_H = (50.0, "DGX H100/H200: eight single-port ConnectX-7, up to 400 Gb/s each "
                "(https://docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-"
                "enterprise-ai/latest/core-components.html)")
# catalog name -> the DGX system's network per GPU
SYSTEM_NETWORK: dict[str, tuple[float, str]] = {
    "NVIDIA A100 40GB SXM4": _DGX_A100, "NVIDIA A100 80GB SXM4": _DGX_A100,
    "NVIDIA H100 80GB SXM5": _DGX_H, "NVIDIA H200 SXM 141GB": _DGX_H,
}


def network_of(gpu: catalog.GPU) -> tuple[float, str] | None:
    """The DGX system's network per GPU for this card, or None where NVIDIA ships it in no DGX."""
    return SYSTEM_NETWORK.get(gpu.name)


def resolve(gpu: catalog.GPU, n: int, busbw: float | None) -> tuple[float | None, str]:
    """(GB/s per GPU between nodes, where it comes from) for a plan on n GPUs: --busbw if given, else
    the DGX figure; None within one node; a UserError above one node with neither."""
    if busbw is not None:
        if not busbw > 0:
            raise UserError(f"--busbw {busbw}: GB/s per GPU across the nodes, a positive number")
        return busbw, "given (--busbw, GB/s per GPU across the nodes)"
    known = network_of(gpu)
    if known is not None:
        return known
    if n > GPUS_PER_NODE:
        raise UserError(f"{n} x {gpu.short}: above one {GPUS_PER_NODE}-GPU node the plan crosses the network "
                        f"between nodes, and the catalog has no system figure for the {gpu.short} (only DGX cards "
                        f"have one): give --busbw (GB/s per GPU across your nodes, e.g. 12.5 for 100 Gb/s)")
    return None, f"within one node ({n} GPU(s)): no network between nodes"
