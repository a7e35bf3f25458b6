"""KV caches for the decoder's attention (model.py): ``DynamicCache`` grows by concatenation,
as a plain generate loop does; ``StaticCache`` is preallocated, as gpt-fast's, so the decode
step has fixed shapes for CUDA graphs.  Both offer ``write`` (a prefill from position 0),
``update`` (decode at tensor positions) and ``nbytes``."""

from __future__ import annotations

import torch
from torch import nn

from gpuarena.workloads.llm.shapes import LlamaConfig


class DynamicCache:
    """Keys and values grown by concatenation each step: what a plain generate loop does
    (reallocation and copy every token; shapes change, so no CUDA graph)."""

    def __init__(self, n_layers: int):
        self.k: list = [None] * n_layers
        self.v: list = [None] * n_layers

    def write(self, layer, k, v):
        self.k[layer], self.v[layer] = k, v

    def update(self, layer, pos, k, v):
        self.k[layer] = torch.cat([self.k[layer], k], dim=2)
        self.v[layer] = torch.cat([self.v[layer], v], dim=2)
        return self.k[layer], self.v[layer], None

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.k + self.v if t is not None)


class StaticCache(nn.Module):
    """Preallocated keys and values, one [B, kv_heads, max_len, hd] buffer per layer (gpt-fast's
    cache): the decode step writes one position in place and attends over the whole buffer under
    a mask, so its shapes never change and it can be captured as a CUDA graph.  One buffer per
    layer, not one for all: under torch.compile an in-place write into a view of a shared buffer
    is functionalised into a copy of the whole buffer, per layer and step (measured on the H200:
    decode time grew with the batch, 71 ms per token at batch 64)."""

    def __init__(self, cfg: LlamaConfig, batch: int, max_len: int, device, dtype, kv_heads: int | None = None):
        super().__init__()
        shape = (batch, kv_heads or cfg.n_kv_heads, max_len, cfg.head_dim)
        for i in range(cfg.n_layers):
            self.register_buffer(f"k{i}", torch.zeros(shape, device=device, dtype=dtype), persistent=False)
            self.register_buffer(f"v{i}", torch.zeros(shape, device=device, dtype=dtype), persistent=False)
        self.k = [getattr(self, f"k{i}") for i in range(cfg.n_layers)]
        self.v = [getattr(self, f"v{i}") for i in range(cfg.n_layers)]
        self.max_len = max_len
        self.register_buffer("positions", torch.arange(max_len, device=device), persistent=False)

    def write(self, layer, k, v):
        t = k.shape[2]
        self.k[layer][:, :, :t] = k
        self.v[layer][:, :, :t] = v

    def update(self, layer, pos, k, v):
        # positions come as a tensor, so one captured CUDA graph replays at every position
        self.k[layer].index_copy_(2, pos, k)
        self.v[layer].index_copy_(2, pos, v)
        mask = (self.positions[None, :] <= pos[:, None])[None, None]
        return self.k[layer], self.v[layer], mask

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.k + self.v)
