"""Stable Diffusion v1.5 generation's body: the pipeline, setup, step and the max-batch search (its
facts are in spec.py)."""

from __future__ import annotations

import time

import torch

from gpuarena.store.flags import nan_flag
from gpuarena.workloads.base import Workload
from gpuarena.workloads.capacity import find_max, search_max_batch
from gpuarena.workloads.sd15.arch import (
    PROMPT_TOKENS,
    SCHEDULER,
    TINY,
    TOKENS,
    V15,
    count_component_flops,
    flops_per_image,
    unet_calls,
)
from gpuarena.workloads.sd15.spec import SD15GenerateSpec


class SD15Generate(SD15GenerateSpec, Workload):
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

    def flops_per_item(self) -> float:
        known = self.flops(self.p)
        if known is not None:
            return known
        # Other sizes: count the components on the meta device (no weights are allocated).
        parts = count_component_flops(self.p["arch"], self.p["image_size"])
        return flops_per_image(*parts, steps=self.p["inference_steps"], guidance=self.p["guidance"])

    def precision(self) -> str:
        return "fp16" if self.device.type == "cuda" else "fp32"

    def check(self) -> list:
        imgs = self.images
        if isinstance(imgs, torch.Tensor) and not torch.isfinite(imgs).all().item():
            return [nan_flag("image has NaN/inf")]
        return []

    def extra(self) -> dict:
        out = {"attn_processors": self.attn, "batch": self.batch,
               "unet_calls_per_image": unet_calls(self.p["inference_steps"]),
               "weights": self.p["weights"] or f"random ({self.p['arch']} configs)",
               "dtype": str(self.dtype()).replace("torch.", "")}
        out.update(self.search_info)
        return out
