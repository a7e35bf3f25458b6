"""A memory test over most of a GPU's free memory: patterns written to every word, read back later.

Like the pattern tests of memtest86 and DCGM's memory diagnostic, in the simplest form that still
catches a stuck bit, a weak cell and an addressing fault: the free memory is taken in chunks; each
pass writes every chunk (word ``i`` of chunk ``c`` gets ``i ^ key ^ hash(c)``, so no two words of
a chunk hold the same value and a write landing at the wrong address shows), then reads every chunk
back once all are written (so the data has sat in DRAM, not in the 50 MB L2).  The four keys are
0, its complement and the two checkerboards, so every bit of every word is written both 0 and 1.
A word that does not read back what was written is a memory error of that GPU.

On a CPU the same code tests a tiny buffer: it proves the code path, not the memory.
"""

from __future__ import annotations

import time

import torch

KEYS = (0, -1, 0x55555555, -0x55555556)   # int32: 0x00000000, 0xFFFFFFFF, 0x55555555, 0xAAAAAAAA
CHUNK = 1 << 30                           # bytes per chunk on a GPU
TINY = 8 << 20                            # bytes tested on a CPU
FRACTION = 0.90                           # of the free memory (the rest: the pattern's index, a scratch chunk,
                                          # CUDA's own needs)


def _chunk_key(c: int) -> int:
    k = (c * 0x9E3779B1) & 0xFFFFFFFF
    return k - (1 << 32) if k >= 1 << 31 else k


def memtest(device, fraction: float = FRACTION) -> dict:
    """{bytes_tested, free_bytes, passes, bad_words, seconds} for one device."""
    device = torch.device(device)
    if device.type == "cuda":
        free = torch.cuda.mem_get_info(device)[0]
        chunk = CHUNK
        budget = int(fraction * free) - 3 * chunk       # the index and the scratch chunk, and the compare's mask
    else:
        free, chunk, budget = None, TINY // 4, TINY
    words = chunk // 4
    t0 = time.perf_counter()
    index = torch.arange(words, dtype=torch.int32, device=device)
    scratch = torch.empty_like(index)
    chunks = []
    while (len(chunks) + 1) * chunk <= budget:
        try:
            chunks.append(torch.empty(words, dtype=torch.int32, device=device))
        except torch.OutOfMemoryError:
            break
    bad = torch.zeros((), dtype=torch.int64, device=device)
    for key in KEYS:
        for c, buf in enumerate(chunks):
            torch.bitwise_xor(index, key ^ _chunk_key(c), out=buf)
        for c, buf in enumerate(chunks):
            torch.bitwise_xor(index, key ^ _chunk_key(c), out=scratch)
            bad += (buf != scratch).sum()
    out = {"bytes_tested": len(chunks) * chunk, "free_bytes": free, "passes": len(KEYS),
           "bad_words": int(bad.item()), "seconds": round(time.perf_counter() - t0, 3)}
    del chunks, index, scratch
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return out
