"""llm-serve's facts (torch-free): the spec of serving a Llama-style decoder; serve.py is its body
(the module docstring there describes a step and the variants)."""

from __future__ import annotations

from typing import Annotated, Optional

from pydantic import model_validator

from gpuarena.errors import UserError
from gpuarena.store.figures import Bytes, Count, Ms, Name, Rate, Ratio, Record, Seconds, Text, TFlops, within
from gpuarena.workloads.figures import Batch, Capacity
from gpuarena.workloads.llm.engine_facts import GEMV_DESCRIPTION, require_compile
from gpuarena.workloads.llm.flops import param_counts, request_flops
from gpuarena.workloads.llm.precisions import VARIANT_PRECISION
from gpuarena.workloads.llm.shapes import SHAPES, resolve_shape
from gpuarena.workloads.llm.versions import CHANGES
from gpuarena.workloads.spec import Param, WorkloadSpec


class LLMServeFigures(Capacity):
    batch: Batch = None
    cache: Name = None
    prefill: Name = None
    decode: Name = None
    projections: Name = None
    decode_attention: Name = None
    inductor: Record = None
    dtype: Name = None
    quantization: Text = None
    matvec: Text = None        # the gemv variant: which layers llm/gemv.py's kernel took
    params: Annotated[Optional[float], within(0.0, 1e15)] = None     # the model's parameter count
    weights_bytes: Bytes = None
    kv_cache_bytes: Bytes = None
    requests_measured: Count = None
    slo_ms: Ms = None
    cudagraph_skips: Count = None
    # llm/flops.py decode_figures: what the medians of TTFT and time per token come to
    ttft_s: Seconds = None
    prefill_tokens_per_s: Rate = None
    prefill_tflops: TFlops = None
    tpot_ms_median: Ms = None
    tpot_ms_p99: Ms = None
    decode_tokens_per_s: Rate = None
    decode_context_mean: Ratio = None
    kv_cache_live_bytes: Bytes = None
    decode_bytes_per_step: Ratio = None
    decode_bandwidth_gbs: Rate = None
    bytes_model: Text = None
    decode_profile: Record = None

    @model_validator(mode="after")
    def _decode_has_prefill(self):
        """A serving result's decode figures come with the prefill and batch they were timed at
        (workloads/llm/serve.py writes them together; the Serving section reads them together)."""
        if self.tpot_ms_median is not None and (self.ttft_s is None or self.batch is None):
            raise ValueError("tpot_ms_median without ttft_s and batch (a serving result's figures come together)")
        return self


class LLMServeSpec(WorkloadSpec):
    name = "llm-serve"
    runner = "gpuarena.workloads.llm.serve:LLMServe"
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
        "gemv": GEMV_DESCRIPTION + " (with compile; not int4's packed weights)",
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

    prefill_compiled = staticmethod(lambda c, upcast: c in ("compile", "graph") or (c == "auto" and not upcast))

    @classmethod
    def check_variant(cls, variants, params) -> None:   # else it runs eager, stored as prefill=graph
        require_compile(params["prefill"], variants)
