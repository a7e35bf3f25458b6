"""The topology in the environment fingerprint, from what `nvidia-smi` printed on the 2-GPU H200 host."""

from __future__ import annotations

from gpuarena.measure import env

# `nvidia-smi nvlink -s` on the lent nvidia-h200-x2 machine, 2026-11-29 (first GPU; 18 links)
NVLINK_S = "GPU 0: NVIDIA H200 (UUID: GPU-1aad39a4)\n" + "".join(
    f"\t Link {i}: 26.562 GB/s\n" for i in range(18)) + "GPU 1: NVIDIA H200 (UUID: GPU-c3684858)\n" + "".join(
    f"\t Link {i}: 26.562 GB/s\n" for i in range(17)) + "\t Link 17: <inactive>\n"


def test_nvlink_speeds_sum_per_gpu():
    # 18 x 26.562 = 478.116 GB/s per direction: the H200's 900 GB/s "bidirectional" NVLink figure
    assert env.nvlink_gbs(NVLINK_S) == {0: 478.116, 1: 451.554}
    assert env.nvlink_gbs("") == {} and env.nvlink_gbs("No NVLinks") == {}


def test_topology_loses_the_terminal_underline():
    raw = "\x1b[4mGPU0\tGPU1\tCPU Affinity\x1b[0m\nGPU0\t X \tNV18\t0-31"
    assert env.ANSI.sub("", raw) == "GPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\t0-31"
