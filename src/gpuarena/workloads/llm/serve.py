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

from gpuarena.errors import UserError, WorkloadSkipped
from gpuarena.measure.stats import nearest_rank
from gpuarena.workloads.base import Param, Workload
from gpuarena.workloads.capacity import search_max_batch
from gpuarena.workloads.llm import engine, gemv, weight_only
from gpuarena.workloads.llm.cache import DynamicCache, StaticCache
from gpuarena.workloads.llm.flops import decode_figures, param_counts, request_flops
from gpuarena.workloads.llm.model import build
from gpuarena.workloads.llm.precisions import VARIANT_PRECISION
from gpuarena.workloads.llm.shapes import SHAPES, resolve_shape
from gpuarena.workloads.llm.versions import CHANGES
from gpuarena.store.flags import nan_flag
from gpuarena.store.workload_figures import LLMServeFigures


class LLMServe(Workload):
    name = "llm-serve"
    figures = LLMServeFigures
    version = 9
    version_changes = CHANGES
    description = ("Llama-style decoder serving one request batch: prefill of the prompt, then greedy "
                   "decode; item = generated token")
    item = "token"
    unit = "tokens/s"
    source = "issue 17 (article 000: the A100 for 'large-model inference such as LLM serving')"
    kind = "inference"
    physics = "serving"
    axis = "batch_size"
    rank_aggregate = "sum"
    published_as: tuple[str, ...] = ()
    dominant_op = "matmul"
    # decode reads every weight and the live KV cache per token: ranked by bandwidth (verbs/serving.py)
    advised_by = "`gpuarena advise -w llm-serve` and the report's Serving section (memory and bandwidth model)"
    params = (
        Param("shape", str, "llama3-8b", "model shape (llm/shapes.py SHAPES)", tiny="tiny", choices=tuple(SHAPES)),
        Param("hf_config", str, "", "a Hugging Face config.json (or its folder) to use instead of shape"),
        Param("batch_size", int, 1, "concurrent sequences", min=1, max=65536),
        Param("prompt_len", int, 512, "prompt tokens per sequence", tiny=16, min=1, max=1_048_576),
        Param("new_tokens", int, 128, "generated tokens a sequence (1 by the prefill)", tiny=8, min=1, max=1_048_576),
        Param("slo_ms", float, 50.0, "the report's objective for the p99 time per output token", min=0.001, max=1e6),
        Param("search", str, "none", "max-batch: time the largest batch that fits", choices=("none", "max-batch")),
        Param("search_max", int, 1024, "largest batch the search tries", tiny=4, min=1, max=65536),
        Param("decode_attention", str, "auto", "decode attention: SDPA's kernel; FlexAttention's split-KV decode "
              "(flex); inductor's own reductions; auto = flex under compile (H200: 1.12x SDPA at batch 1), else sdpa",
              choices=("auto", "sdpa", "flex", "reduction")),
        Param("prefill", str, "auto", "with compile: the prefill compiled, compiled and replayed as CUDA graphs "
              "(graph: one recorded per prompt length), or eager; auto compiles it unless int8/int4 weights are "
              "upcast in it (H200, int8: 0.93 TFLOP/s)", choices=("auto", "compile", "graph", "eager")),
        Param("profile", int, 0, "1: profile one more request's decode, store its costliest kernels", min=0, max=1),
    )
    variants = {
        "seed": "a plain generate loop: eager, KV cache grown by torch.cat each token",
        "static-cache": "preallocated KV cache written in place (fixed shapes), eager",
        "compile": "static cache; decode step torch.compile'd with mode='reduce-overhead', fullgraph (CUDA "
                   "graphs); prefill compiled, prompt length dynamic; inductor coordinate-descent tuning",
        "fused-proj": "one matmul for the Q, K and V projections and one for the gate and up projections",
        "int8-weights": "weight-only int8 of every linear layer (per-channel scales, gpt-fast's recipe), its "
                        "input realised before the product; activations and arithmetic stay bf16",
        "int4-weights": "weight-only int4 of every linear layer (groups of 128 with a scale and zero each, "
                        "gpt-fast's recipe on PyTorch's tinygemm kernel, sm_80+); activations stay bf16",
        "fp8-weights": "FP8 e4m3 weights (per-channel scales) in every linear layer: weight-only in a compiled "
                       "batch-1 decode, FP8 tensor cores with per-row activation scales elsewhere; sm_89+",
        "gemv": gemv.DESCRIPTION + " (with compile; not int4's packed weights)",
    }
    # one precision of the weights (precisions.py); the kernel reads no packed int4
    exclusive = (frozenset(VARIANT_PRECISION), frozenset({"gemv", "int4-weights"}))
    default_warmup = default_steps = tiny_warmup = tiny_steps = 1

    @classmethod
    def parse_variant(cls, spec: str) -> frozenset[str]:
        chosen = super().parse_variant(spec)
        if "gemv" in chosen and "compile" not in chosen:
            raise UserError("llm-serve: gemv replaces a compiled decode's one-row products: add compile")
        return chosen

    @classmethod
    def config(cls, params: dict):
        return resolve_shape(params["shape"], params.get("hf_config") or "")

    @classmethod
    def resolve_params(cls, given, size="full"):
        p = super().resolve_params(given, size)
        cfg = cls.config(p)          # a bad hf_config path is a UserError before anything runs
        if (need := p["prompt_len"] + p["new_tokens"]) > cfg.max_seq_len:
            raise UserError(f"llm-serve: prompt_len + new_tokens = {need} exceeds max_seq_len {cfg.max_seq_len}")
        return p

    @classmethod
    def flops(cls, params: dict) -> float:
        """Model FLOPs per generated token (the request's FLOPs over its new tokens)."""
        return request_flops(cls.config(params), params["prompt_len"], params["new_tokens"]) / params["new_tokens"]

    @classmethod
    def param_count(cls, params: dict) -> int:
        return param_counts(cls.config(params))[0]

    @classmethod
    def executed_precision(cls, variants, arch: str | None, params: dict | None = None) -> dict[str, str]:
        """Every op class runs at the one precision the recipe names (see _precision_name)."""
        return dict.fromkeys(("matmul", "conv", "attention", "elementwise"), cls._precision_name(variants, arch))

    @classmethod
    def _precision_name(cls, variants, arch: str | None) -> str:
        if arch == "cpu":
            return "fp32"
        return "fp8" if "fp8-weights" in variants else "bf16"

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
        self.matvec = f"{gemv.use(self.model)} layers: {gemv.DESCRIPTION}" if "gemv" in v else None
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

    prefill_compiled = staticmethod(lambda c, upcast: c in ("compile", "graph") or (c == "auto" and not upcast))

    @classmethod
    def check_variant(cls, variants, params) -> None:   # else it runs eager, stored as prefill=graph
        engine.require_compile(params["prefill"], variants)

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
