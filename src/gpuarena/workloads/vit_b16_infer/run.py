"""ViT-B/16 inference's body: the model, setup and step (its facts are in spec.py)."""

from __future__ import annotations

import torch

from gpuarena.store.flags import nan_flag
from gpuarena.workloads.base import Workload, apply_math_mode, autocast_dtype
from gpuarena.workloads.vit_b16_infer.spec import ViTB16InferSpec, tokens


class ViTB16Infer(ViTB16InferSpec, Workload):
    def dtype(self):
        v = self.ctx.variants
        return torch.float16 if "fp16" in v else torch.bfloat16 if "bf16" in v else torch.float32

    def setup(self) -> None:
        import torchvision

        v, size, dt = self.ctx.variants, self.p["image_size"], self.dtype()
        apply_math_mode(v)
        model = torchvision.models.vit_b_16(image_size=size).eval().to(self.device, dtype=dt)
        self.x = torch.randn(self.p["batch_size"], 3, size, size, device=self.device, dtype=dt)
        if "channels-last" in v:
            self.x = self.x.contiguous(memory_format=torch.channels_last)
        self.amp = autocast_dtype(v)
        if "compile" in v:
            mode = self.p["compile_mode"]
            model = torch.compile(model, mode=None if mode == "default" else mode)
        self.model = model
        self.out = None

    @torch.inference_mode()
    def step(self) -> None:
        with torch.autocast(self.device.type, dtype=self.amp, enabled=self.amp is not None):
            self.out = self.model(self.x)

    def check(self) -> list:
        if self.out is not None and not torch.isfinite(self.out.float()).all().item():
            return [nan_flag("logits have NaN/inf")]
        return []

    def extra(self) -> dict:
        return {"dtype": str(self.dtype()).replace("torch.", ""), "tokens": tokens(self.p["image_size"])}
