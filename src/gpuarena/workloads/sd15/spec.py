"""Stable Diffusion v1.5 image generation (article 000 section 3.3, article 001 section 2.2).

A diffusers ``StableDiffusionPipeline`` assembled from the v1.5 component
configurations with random weights (no hub is reachable; the weights do not
change the arithmetic), or a local v1.5 checkout with ``--set weights=PATH``.
No tokenizer files can be fetched either, so each step runs the CLIP text
encoder on fixed token ids (the prompt and the empty negative prompt, 77 tokens
each) and hands the pipeline ``prompt_embeds``: the text encoder stays in the
timing.  One step = one pipeline call of ``batch_size`` images; item = image.

``search=max-batch`` answers the article's "maximum concurrent generations":
the largest batch that fits in memory, found by doubling then bisecting with
OOM taken as an answer; the timed steps then run at that batch.

diffusers is imported inside functions only: it is not installed everywhere.
"""

from __future__ import annotations

import os
from typing import Optional

from pydantic import Field

from gpuarena.errors import UserError
from gpuarena.store.figures import Count, Name, Records, Seconds, Text
from gpuarena.workloads.facts import first_int, steps_in
from gpuarena.workloads.figures import Batch, Capacity
from gpuarena.workloads.resnet50_train.spec import COMPILE_MODES
from gpuarena.workloads.sd15.arch import (
    V15_TEXT_ENC,
    V15_UNET_FWD_512,
    V15_VAE_DEC_512,
    count_component_flops,
    flops_per_image,
)
from gpuarena.workloads.spec import Param, WorkloadSpec


class SD15Figures(Capacity):
    attn_processors: Optional[list[str]] = Field(None, max_length=1000)
    batch: Batch = None
    unet_calls_per_image: Count = None
    weights: Text = None
    dtype: Name = None
    search_steps: Count = None
    latency_limit_s: Seconds = None
    max_batch_within_latency: Count = None
    latency_tries: Records = None


class SD15GenerateSpec(WorkloadSpec):
    name = "sd15-generate"
    runner = "gpuarena.workloads.sd15.run:SD15Generate"
    figures = SD15Figures
    version = 1
    description = "diffusers StableDiffusionPipeline, SD v1.5 configs, PNDM, guidance 7.5; item = image"
    item = "image"
    headline = "latency_s_per_item"   # the articles quote seconds per image
    source = "article 000, section 3.3; article 001, section 2.2"
    kind = "generation"
    axis = "batch_size"
    dominant_op = "matmul"   # the UNet's attention and projections, all in the pipeline's dtype
    published_as = ("Stable Diffusion v1.5 txt2img", "Stable Diffusion v1.5 txt2img (article 000 3.3, diffusers)")
    params = (
        Param("batch_size", int, 1, "images per pipeline call", min=1, max=4096),
        # Not "steps": that name is the runner's steps per timed window (--set steps=N).
        Param("inference_steps", int, 50, "denoising steps (PNDM)", tiny=2, min=1, max=1000),
        Param("image_size", int, 512, "height and width in pixels (multiple of 8)", tiny=64, min=8, max=4096),
        Param("guidance", float, 7.5, "classifier-free guidance scale (> 1 doubles the UNet batch)",
              min=0.0, max=100.0),
        Param("arch", str, "v1.5", "component configs: v1.5, or tiny for CPU tests", tiny="tiny",
              choices=("v1.5", "tiny")),
        Param("weights", str, "", "local v1.5 checkout to load instead of random weights (no download)"),
        Param("output_type", str, "pil", "pipeline output: pil (the article's), np or pt",
              choices=("pil", "np", "pt")),
        Param("compile_mode", str, "default", "torch.compile mode of the compile variant", choices=COMPILE_MODES),
        Param("search", str, "none", "max-batch: find the largest batch that fits, time at that batch",
              choices=("none", "max-batch")),
        Param("search_max", int, 256, "largest batch the search tries", tiny=8, min=1, max=65536),
        Param("search_steps", int, 2, "denoising steps per search try (memory does not grow with steps)",
              min=1, max=1000),
        Param("latency_limit_s", float, 0.0, "with max-batch: also the largest batch whose full call "
              "takes at most this long (0: skip)", min=0.0, max=86400.0),
    )

    @classmethod
    def published_params(cls, setting: str) -> dict:   # "512x512, 50 steps"; 512 when unstated
        steps = steps_in(setting)
        return {"image_size": first_int(setting) or 512, **({"inference_steps": steps} if steps else {})}

    @classmethod
    def check_params(cls, params: dict) -> None:
        """weights: a local diffusers checkout (a folder with model_index.json), checked before the run."""
        w = params.get("weights")
        if w and not os.path.isfile(os.path.join(os.path.expanduser(w), "model_index.json")):
            raise UserError(f"weights={w[:200]!r}: not a local diffusers checkout (no model_index.json there)")

    variants = {
        "seed": "the article's pipeline: fp16 on CUDA (fp32 on CPU), the library's default attention",
        "sdpa": "AttnProcessor2_0: torch scaled_dot_product_attention (flash / memory-efficient kernels)",
        "eager-attn": "AttnProcessor: explicit baddbmm-softmax-bmm attention (pre-PyTorch-2 path)",
        "channels-last": "UNet and VAE in NHWC memory format",
        "fused-qkv": "pipe.fuse_qkv_projections(): one matmul for Q, K and V (same output)",
        "compile": "torch.compile the UNet and the VAE decoder (mode from compile_mode)",
    }
    exclusive = (frozenset({"sdpa", "eager-attn"}), frozenset({"eager-attn", "fused-qkv"}))
    default_warmup = 1
    default_steps = 1
    tiny_warmup = 0
    tiny_steps = 1
    @classmethod
    def flops(cls, params: dict) -> float | None:
        """v1.5 at 512 px from the counted constants; v1.5 at another size counted on the meta device
        (diffusers' published configs, no weights; None without diffusers); the tiny test arch unknown."""
        if params["arch"] != "v1.5":
            return None
        if params["image_size"] == 512:
            parts = (V15_UNET_FWD_512, V15_VAE_DEC_512, V15_TEXT_ENC)
        else:
            try:
                parts = count_component_flops("v1.5", params["image_size"])
            except ImportError:
                return None
        return flops_per_image(*parts, steps=params["inference_steps"], guidance=params["guidance"])

    @classmethod
    def executed_precision(cls, variants: frozenset[str], arch: str | None,
                           params: dict | None = None) -> dict[str, str]:
        """The pipeline is cast to fp16 on CUDA (everything runs fp16), fp32 on the CPU."""
        return dict.fromkeys(("matmul", "conv", "attention", "elementwise"), "fp32" if arch == "cpu" else "fp16")
