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
import time

import torch

from gpuarena.errors import UserError
from gpuarena.workloads.base import Param, Workload
from gpuarena.workloads.capacity import find_max, search_max_batch
from gpuarena.workloads.facts import first_int, steps_in
from gpuarena.workloads.resnet50 import COMPILE_MODES
from gpuarena.workloads.sd15_arch import (PROMPT_TOKENS, SCHEDULER, TINY, TOKENS, V15, V15_TEXT_ENC,
                                          V15_UNET_FWD_512, V15_VAE_DEC_512, count_component_flops,
                                          flops_per_image, unet_calls)
from gpuarena.store.flags import nan_flag
from gpuarena.store.workload_figures import SD15Figures


class SD15Generate(Workload):
    name = "sd15-generate"
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
        Param("guidance", float, 7.5, "classifier-free guidance scale (> 1 doubles the UNet batch)", min=0.0, max=100.0),
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

    # --- building -----------------------------------------------------------
    def dtype(self):
        return torch.float16 if self.device.type == "cuda" else torch.float32

    def build(self):
        from diffusers import AutoencoderKL, PNDMScheduler, StableDiffusionPipeline, UNet2DConditionModel
        from transformers import CLIPTextConfig, CLIPTextModel

        if self.p["weights"]:
            return StableDiffusionPipeline.from_pretrained(
                self.p["weights"], torch_dtype=self.dtype(), local_files_only=True, use_safetensors=True,
                safety_checker=None, requires_safety_checker=False)
        cfg = V15 if self.p["arch"] == "v1.5" else TINY
        return StableDiffusionPipeline(
            vae=AutoencoderKL(**cfg["vae"]), text_encoder=CLIPTextModel(CLIPTextConfig(**cfg["clip"])),
            tokenizer=None, unet=UNet2DConditionModel(**cfg["unet"]),
            scheduler=PNDMScheduler(**SCHEDULER), safety_checker=None, feature_extractor=None,
            requires_safety_checker=False).to(dtype=self.dtype())

    def setup(self) -> None:
        from diffusers.models.attention_processor import AttnProcessor, AttnProcessor2_0

        if self.p["image_size"] % 8:
            raise ValueError(f"image_size={self.p['image_size']} is not a multiple of 8")
        v = self.ctx.variants
        pipe = self.build().to(self.device)
        pipe.set_progress_bar_config(disable=True)
        if "sdpa" in v:
            pipe.unet.set_attn_processor(AttnProcessor2_0())
            pipe.vae.set_attn_processor(AttnProcessor2_0())
        elif "eager-attn" in v:
            pipe.unet.set_attn_processor(AttnProcessor())
            pipe.vae.set_attn_processor(AttnProcessor())
        if "fused-qkv" in v:
            pipe.fuse_qkv_projections()
        if "channels-last" in v:
            pipe.unet.to(memory_format=torch.channels_last)
            pipe.vae.to(memory_format=torch.channels_last)
        if "compile" in v:
            mode = None if self.p["compile_mode"] == "default" else self.p["compile_mode"]
            pipe.unet = torch.compile(pipe.unet, mode=mode)
            pipe.vae.decoder = torch.compile(pipe.vae.decoder, mode=mode)
        self.pipe = pipe
        self.attn = sorted({type(p).__name__ for p in pipe.unet.attn_processors.values()})
        vocab = pipe.text_encoder.config.vocab_size
        bos, eos = vocab - 2, vocab - 1  # CLIP's <|startoftext|> and <|endoftext|> are its last ids
        prompt = [bos] + [(7 * i + 320) % (vocab - 2) for i in range(PROMPT_TOKENS)] + [eos]
        self.prompt_ids = torch.tensor(prompt + [eos] * (TOKENS - len(prompt)), device=self.device)
        self.empty_ids = torch.tensor([bos] + [eos] * (TOKENS - 1), device=self.device)
        self.batch = self.p["batch_size"]
        self.search_info: dict = {}
        if self.p["search"] == "max-batch":
            self.search()
        self.images = None

    # --- one step -----------------------------------------------------------
    @torch.inference_mode()
    def generate(self, batch: int, steps: int):
        enc = self.pipe.text_encoder
        prompt = enc(self.prompt_ids.expand(batch, -1))[0]
        negative = enc(self.empty_ids.expand(batch, -1))[0]
        gen = torch.Generator(self.device).manual_seed(0)
        size = self.p["image_size"]
        return self.pipe(prompt_embeds=prompt, negative_prompt_embeds=negative, height=size, width=size,
                         num_inference_steps=steps, guidance_scale=self.p["guidance"], generator=gen,
                         output_type=self.p["output_type"]).images

    def step(self) -> None:
        self.images = self.generate(self.batch, self.p["inference_steps"])

    def items_per_step(self) -> float:
        return float(getattr(self, "batch", self.p["batch_size"]))

    # --- the maximum-concurrency search --------------------------------------
    def timed_call(self, batch: int) -> float:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        t0 = time.perf_counter()
        self.generate(batch, self.p["inference_steps"])
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return time.perf_counter() - t0

    def search(self) -> None:
        info = search_max_batch(lambda b: self.generate(b, self.p["search_steps"]), self.device,
                                self.p["search_max"])
        best = info["max_batch"]
        info["search_steps"] = self.p["search_steps"]
        if best == 0:
            raise MemoryError("out of memory: even a batch of 1 image does not fit")
        limit = self.p["latency_limit_s"]
        if limit > 0:
            times: dict[int, float] = {}

            def quick_enough(b: int) -> bool:
                times[b] = self.timed_call(b)
                return times[b] <= limit

            lat_best, lat_tries, _ = find_max(quick_enough, best)
            for t in lat_tries:
                t["call_s"] = times[t["batch"]]
            info.update(latency_limit_s=limit, max_batch_within_latency=lat_best, latency_tries=lat_tries)
        self.search_info = info
        self.batch = best

    # --- figures ------------------------------------------------------------
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

    def flops_per_item(self) -> float:
        known = self.flops(self.p)
        if known is not None:
            return known
        # Other sizes: count the components on the meta device (no weights are allocated).
        parts = count_component_flops(self.p["arch"], self.p["image_size"])
        return flops_per_image(*parts, steps=self.p["inference_steps"], guidance=self.p["guidance"])

    @classmethod
    def executed_precision(cls, variants: frozenset[str], arch: str | None,
                           params: dict | None = None) -> dict[str, str]:
        """The pipeline is cast to fp16 on CUDA (everything runs fp16), fp32 on the CPU."""
        return dict.fromkeys(("matmul", "conv", "attention", "elementwise"), "fp32" if arch == "cpu" else "fp16")

    def precision(self) -> str:
        return "fp16" if self.device.type == "cuda" else "fp32"

    def check(self) -> list:
        imgs = self.images
        if isinstance(imgs, torch.Tensor) and not torch.isfinite(imgs).all().item():
            return [nan_flag("image has NaN/inf")]
        return []

    def extra(self) -> dict:
        out = {"attn_processors": self.attn, "batch": self.batch, "unet_calls_per_image": unet_calls(self.p["inference_steps"]),
               "weights": self.p["weights"] or f"random ({self.p['arch']} configs)",
               "dtype": str(self.dtype()).replace("torch.", "")}
        out.update(self.search_info)
        return out
