"""ResNet-50 training's body: setup and step (the facts are in spec.py)."""

from __future__ import annotations

import torch

from gpuarena.store.flags import nan_flag
from gpuarena.workloads.base import Workload, apply_math_mode, autocast_dtype, backward_and_step
from gpuarena.workloads.resnet50_train.spec import ResNet50TrainSpec


class ResNet50Train(ResNet50TrainSpec, Workload):
    def setup(self) -> None:
        import torchvision

        v = self.ctx.variants
        apply_math_mode(v)
        torch.backends.cudnn.benchmark = "cudnn-benchmark" in v
        bs, size = self.p["batch_size"], self.p["image_size"]
        model = torchvision.models.resnet50().to(self.device)
        self.x = torch.randn(bs, 3, size, size, device=self.device)
        self.labels = torch.randint(0, 1000, (bs,), device=self.device)
        if "channels-last" in v:
            model = model.to(memory_format=torch.channels_last)
            self.x = self.x.contiguous(memory_format=torch.channels_last)
        model.train()
        self.opt = torch.optim.SGD(model.parameters(), lr=self.p["lr"],
                                   **({"fused": True} if "fused-sgd" in v else {}))
        self.amp = autocast_dtype(v)
        self.scaler = torch.amp.GradScaler(self.device.type) if "amp-fp16" in v else None
        if "compile" in v:
            mode = self.p["compile_mode"]
            model = torch.compile(model, mode=None if mode == "default" else mode)
        self.model = model
        self.loss = None

    def step(self) -> None:
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast(self.device.type, dtype=self.amp, enabled=self.amp is not None):
            out = self.model(self.x)
            if self.p["loss"] == "sum":
                loss = out.float().sum()
            else:
                loss = torch.nn.functional.cross_entropy(out.float(), self.labels)
        backward_and_step(loss, self.opt, self.scaler)
        self.loss = loss

    def extra(self) -> dict:
        group = self.opt.param_groups[0]
        return {"optimizer": "SGD fused" if group.get("fused") else "SGD (PyTorch's default implementation)",
                "cudnn_benchmark": torch.backends.cudnn.benchmark}

    def check(self) -> list:
        if self.loss is not None and not torch.isfinite(self.loss.detach()).item():
            return [nan_flag("output turned to NaN/inf (the article's loss = output.sum() with lr 0.1 diverges)")]
        return []
