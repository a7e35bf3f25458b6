"""LLM serving: prefill and greedy decode of a Llama-style decoder (issue 17).

One step is one request batch: ``batch_size`` sequences of ``prompt_len`` random tokens are
prefilled (the time to first token) and ``new_tokens - 1`` decode steps follow, each feeding back
the argmax token; item = generated token, so the runner's throughput is generated tokens/s of the
whole request.  Inside the step, CUDA events mark the end of the prefill and of every decode step
(recorded on the stream, read after one synchronisation at the end of the request), so the per-token
times do not perturb the decode; on a CPU the marks are perf_counter readings (its ops are
synchronous).  The first request of a process is left out of these figures: it holds compilation and
CUDA-graph recording.

Variants: see ``variants`` (llm/engine.py says why).  Versions (issue 23): llm/versions.py says what each
changed, and which earlier results it changed (``version_changes``).
"""

from __future__ import annotations

import statistics
import time

import torch

from gpuarena.errors import WorkloadSkipped
from gpuarena.measure.stats import nearest_rank
from gpuarena.store.flags import nan_flag
from gpuarena.workloads.base import Workload
from gpuarena.workloads.capacity import search_max_batch
from gpuarena.workloads.llm import engine, gemv, weight_only
from gpuarena.workloads.llm.cache import DynamicCache, StaticCache
from gpuarena.workloads.llm.flops import decode_figures, param_counts
from gpuarena.workloads.llm.model import build
from gpuarena.workloads.llm.engine_facts import GEMV_DESCRIPTION
from gpuarena.workloads.llm.serve_spec import LLMServeSpec


class LLMServe(LLMServeSpec, Workload):
    # --- building ----------------------------------------------------------------
    # --- building ----------------------------------------------------------------
    def setup(self) -> None:
        v = self.ctx.variants
        weight_only.require(self.device, v)     # before building 16 GB of weights
        if why := (gemv.available(self.device) if "gemv" in v else None):
            raise WorkloadSkipped(why)
        self.cfg = cfg = self.config(self.p)
        cuda = self.device.type == "cuda"
        self.dtype = torch.bfloat16 if cuda else torch.float32
        before = torch.cuda.memory_allocated(self.device) if cuda else 0
        with torch.no_grad():
            self.model = build(cfg, self.device, self.dtype).eval()
        if "fused-proj" in v:
            engine.fuse_projections(self.model)
        self.quant = weight_only.for_variants(self.model, v)
        self.matvec = f"{gemv.use(self.model)} layers: {GEMV_DESCRIPTION}" if "gemv" in v else None
        if cuda:    # the FP32 build's blocks: back to the driver, not held by this process's cache
            torch.cuda.empty_cache()
        self.weights_bytes = (torch.cuda.memory_allocated(self.device) - before if cuda else
                              sum(t.numel() * t.element_size() for t in self.model.state_dict().values()))
        self.static = "seed" not in v
        P, n = self.p["prompt_len"], self.p["new_tokens"]
        self.max_len = P + n
        self.attention = engine.decode_attention(self.p["decode_attention"], "compile" in v)
        engine.use_decode_attention(self.model, self.attention, self.max_len, self.device)
        gen = torch.Generator().manual_seed(0)
        self.search_info: dict = {}
        self.batch = self.p["batch_size"]
        cap = max(self.batch, self.p["search_max"] if self.p["search"] == "max-batch" else 0)
        self.prompts = torch.randint(0, cfg.vocab_size, (cap, P), generator=gen).to(self.device)
        # one small tensor per decode position, made now: no host-to-device copy inside a request
        self.positions = [torch.tensor([P + i], device=self.device) for i in range(n)]
        if self.p["search"] == "max-batch":
            self.search_info = search_max_batch(self._probe, self.device, self.p["search_max"])
            if self.search_info["max_batch"] == 0:
                raise MemoryError("out of memory: even one sequence does not fit")
            self.batch = self.search_info["max_batch"]
        self.cache = self._new_cache(self.batch) if self.static else None
        self.decode, self.prefill, self.inductor = self._decode_eager, self._prefill_eager, {}
        if "compile" in v:
            self.inductor = engine.tune_inductor()
            # the cache is written in place by every replay: fixed addresses, as HF's StaticCache marks them
            for buf in self.cache.buffers():
                torch._dynamo.mark_static_address(buf)
            self.decode = torch.compile(self._decode_eager, mode="reduce-overhead", fullgraph=True)
            if self._prefill_compiled():
                self.prefill = engine.compile_prefill(self._prefill_eager, graphs=self.p["prefill"] == "graph")
        self.kernel_profile = None
        self.marks = ([torch.cuda.Event(enable_timing=True) for _ in range(n + 1)] if cuda else None)
        self.ttft, self.tpot, self.requests, self.finite, self.kv_bytes = [], [], 0, None, 0   # seconds each

    def _prefill_compiled(self) -> bool:   # the ``prefill`` param, under compile
        return self.prefill_compiled(self.p["prefill"], bool(weight_only.UPCAST_EVERY_ROW & set(self.ctx.variants)))

    def _new_cache(self, batch: int):
        if not self.static:
            return DynamicCache(self.cfg.n_layers)
        return StaticCache(self.cfg, batch, self.max_len, self.device, self.dtype)

    # --- one request ----------------------------------------------------------------
    def _decode_eager(self, tok, pos, cache):
        return self.model(tok, cache, pos)[:, -1].argmax(-1, keepdim=True)

    def _prefill_eager(self, tokens, cache):
        logits = self.model(tokens, cache, last_only=True)
        return logits, logits[:, -1].argmax(-1, keepdim=True)

    @torch.inference_mode()
    def _request(self, batch: int, cache, decode_steps: int, decode, mark=None, prefill=None):
        logits, tok = (prefill or self._prefill_eager)(self.prompts[:batch], cache)
        if mark:
            mark(1)
        for i in range(decode_steps):
            # clone: a CUDA graph's output buffer is overwritten by its next replay
            tok = decode(tok, self.positions[i], cache).clone()
            if mark:
                mark(i + 2)
        return logits, tok

    def _probe(self, batch: int) -> None:
        """One request at ``batch`` for the capacity search (eager; a static cache holds its full
        length from the start, so two decode steps show its peak; a growing one needs them all)."""
        steps = self.p["new_tokens"] - 1 if not self.static else min(2, self.p["new_tokens"] - 1)
        cache = self._new_cache(batch)
        self._request(batch, cache, steps, self._decode_eager)
        del cache

    def step(self) -> None:
        n = self.p["new_tokens"]
        cache = self.cache if self.static else self._new_cache(self.batch)
        stamps = [0.0] * (n + 1)
        if self.marks:
            def mark(i):
                self.marks[i].record()
        else:
            def mark(i):
                stamps[i] = time.perf_counter()
        mark(0)
        logits, self.tok = self._request(self.batch, cache, n - 1, self.decode, mark, self.prefill)
        self.finite = torch.isfinite(logits).all()
        if self.marks:
            self.marks[n].synchronize()   # the one synchronisation of the request
            times = [self.marks[i].elapsed_time(self.marks[i + 1]) / 1e3 for i in range(n)]
        else:
            times = [stamps[i + 1] - stamps[i] for i in range(n)]
        self.kv_bytes = cache.nbytes()
        self.requests += 1
        if self.requests > 1:           # the first request holds compilation and graph recording
            self.ttft.append(times[0])
            self.tpot.extend(times[1:])

    def items_per_step(self) -> float:
        return float(getattr(self, "batch", self.p["batch_size"]) * self.p["new_tokens"])

    # --- figures ---------------------------------------------------------------------
    def flops_per_item(self) -> float:
        return self.flops(self.p)

    def precision(self) -> str:
        return self._precision_name(self.ctx.variants, self.device.type)

    def check(self) -> list:
        if self.finite is not None and not bool(self.finite):
            return [nan_flag("prefill logits have NaN/inf")]
        return []

    def extra(self) -> dict:
        cfg, P, n, B = self.cfg, self.p["prompt_len"], self.p["new_tokens"], self.batch
        emb = cfg.vocab_size * cfg.dim * torch.finfo(self.dtype).bits // 8
        v = self.ctx.variants
        out = {"batch": B, "cache": "static" if self.static else "dynamic (torch.cat)",
               "prefill": ("eager" if "compile" not in v or not self._prefill_compiled() else "torch.compile, "
                           "dynamic prompt length" + (", CUDA graphs" if self.p["prefill"] == "graph" else "")),
               "decode": "torch.compile reduce-overhead" if "compile" in v else "eager",
               "projections": "fused (wqkv, w13)" if "fused-proj" in v else "separate",
               "decode_attention": self.attention, "inductor": self.inductor,
               "dtype": str(self.dtype).replace("torch.", ""), "quantization": self.quant, "matvec": self.matvec,
               "params": param_counts(cfg)[0], "weights_bytes": self.weights_bytes,
               "kv_cache_bytes": self.kv_bytes, "requests_measured": len(self.ttft), "slo_ms": self.p["slo_ms"]}
        out.update(self.search_info)
        if "compile" in self.ctx.variants:
            from torch._dynamo.utils import counters

            # a decode that could not be captured runs compiled kernels without graphs: say so
            out["cudagraph_skips"] = int(counters["inductor"].get("cudagraph_skips", 0))
        if not self.ttft or not self.tpot:
            return out
        _, n_dense = param_counts(cfg)
        out.update(decode_figures(cfg, B, P, n, statistics.median(self.ttft), statistics.median(self.tpot),
                                  per_weight=(self.weights_bytes - emb) / n_dense,
                                  kv_elem=2 if self.dtype == torch.bfloat16 else 4))
        out["tpot_ms_p99"] = nearest_rank(self.tpot, 99) * 1e3
        if self.p["profile"]:
            try:
                self.kernel_profile = self.kernel_profile or self._profile_decode()
            except Exception as e:  # noqa: BLE001 - the profile is a diagnostic: the timed figures stay
                self.kernel_profile = {"error": f"{type(e).__name__}: {e}"[:300]}
            out["decode_profile"] = self.kernel_profile
        return out

    def _profile_decode(self) -> dict:
        """One more request after the timed ones: its decode steps under the profiler."""
        cache = self.cache if self.static else self._new_cache(self.batch)
        return engine.profile_request(self.prefill, self.decode, self.prompts[:self.batch], self.positions, cache,
                                      self.p["new_tokens"] - 1)
