"""Stable Diffusion v1.5's component configurations and FLOP counts (the sd15-generate workload uses them).

The v1.5 shapes, their tiny CPU-test versions, and the FLOPs of one image: the counted v1.5
constants at 512 px, or a count on the meta device for other sizes.  torch and diffusers are
imported inside functions only: the spec reads this module without them.
"""

from __future__ import annotations

import functools

# Component configs of runwayml/stable-diffusion-v1-5 (unet/, vae/, text_encoder/ and
# scheduler/ config.json of the model repository).
V15 = {
    "unet": dict(sample_size=64, in_channels=4, out_channels=4, layers_per_block=2,
                 block_out_channels=(320, 640, 1280, 1280),
                 down_block_types=("CrossAttnDownBlock2D",) * 3 + ("DownBlock2D",),
                 up_block_types=("UpBlock2D",) + ("CrossAttnUpBlock2D",) * 3,
                 cross_attention_dim=768, attention_head_dim=8),
    "vae": dict(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 4,
                up_block_types=("UpDecoderBlock2D",) * 4, block_out_channels=(128, 256, 512, 512),
                layers_per_block=2, latent_channels=4, sample_size=512, scaling_factor=0.18215),
    "clip": dict(vocab_size=49408, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, max_position_embeddings=77, hidden_act="quick_gelu",
                 projection_dim=768),
}
# The same shapes shrunk until a 64x64 image with 2 steps takes about a second on a CPU.
# The VAE keeps 4 blocks so its down-scaling stays 8x (latents 8x8 for 64 px).
TINY = {
    "unet": dict(sample_size=8, in_channels=4, out_channels=4, layers_per_block=1,
                 block_out_channels=(32, 64), down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                 up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=32,
                 attention_head_dim=8),
    "vae": dict(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 4,
                up_block_types=("UpDecoderBlock2D",) * 4, block_out_channels=(32, 32, 32, 32),
                layers_per_block=1, latent_channels=4, sample_size=64, norm_num_groups=32,
                scaling_factor=0.18215),
    "clip": dict(vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=64, max_position_embeddings=77, hidden_act="quick_gelu",
                 projection_dim=32, bos_token_id=998, eos_token_id=999),
}
SCHEDULER = dict(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                 num_train_timesteps=1000, skip_prk_steps=True, steps_offset=1, set_alpha_to_one=False)
TOKENS = 77            # CLIP's context length
PROMPT_TOKENS = 12     # "a photo of an astronaut riding a horse on mars" is ~12 CLIP tokens

# FLOPs of the v1.5 components at 512x512 (64x64 latents), counted by
# torch.utils.flop_counter.FlopCounterMode on the meta device with explicit
# (AttnProcessor) attention; tests/workloads re-count them (count_component_flops).
V15_UNET_FWD_512 = 803_273_441_280      # one UNet evaluation of one latent
V15_VAE_DEC_512 = 2_514_518_933_504     # one VAE decode of one latent
V15_TEXT_ENC = 13_298_503_680           # one 77-token prompt through CLIP ViT-L/14's text tower


def unet_calls(steps: int) -> int:
    """PNDM with skip_prk_steps (v1.5's scheduler) evaluates the UNet steps + 1 times:
    its PLMS warm-up repeats one timestep (diffusers PNDMScheduler.set_timesteps)."""
    return steps + 1


def flops_per_image(unet_fwd: float, vae_dec: float, text_enc: float, steps: int, guidance: float) -> float:
    """Classifier-free guidance (guidance > 1) runs the UNet and text encoder twice per image."""
    cfg = 2 if guidance > 1 else 1
    return unet_calls(steps) * cfg * unet_fwd + vae_dec + cfg * text_enc


@functools.lru_cache(maxsize=16)
def count_component_flops(arch: str, image_size: int) -> tuple[float, float, float]:
    """(UNet forward, VAE decode, text encoder) FLOPs for one image, counted on the meta device."""
    import torch
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from diffusers.models.attention_processor import AttnProcessor
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import CLIPTextConfig, CLIPTextModel

    cfg = V15 if arch == "v1.5" else TINY
    lat = image_size // 8
    with torch.device("meta"):
        unet = UNet2DConditionModel(**cfg["unet"])
        vae = AutoencoderKL(**cfg["vae"])
        te = CLIPTextModel(CLIPTextConfig(**cfg["clip"]))
        unet.set_attn_processor(AttnProcessor())
        vae.set_attn_processor(AttnProcessor())
        counts = []
        for fn in (lambda: unet(torch.randn(1, 4, lat, lat), torch.tensor(999),
                                encoder_hidden_states=torch.randn(1, TOKENS, cfg["clip"]["hidden_size"])),
                   lambda: vae.decode(torch.randn(1, 4, lat, lat)),
                   lambda: te(torch.zeros(1, TOKENS, dtype=torch.long))):
            with FlopCounterMode(display=False) as fc:
                fn()
            counts.append(float(fc.get_total_flops()))
    return tuple(counts)
