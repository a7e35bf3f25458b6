"""ResNet-50 training throughput: article 000, section 3.1.

The article's code: torchvision ``resnet50()``, SGD lr 0.1, random 224x224
input, ``loss = output.sum()``.  ``seed`` runs exactly that with PyTorch's
defaults; the other variants are the tuning tips of both articles, each a
named recipe that composes with the others where that makes sense.
"""

from __future__ import annotations

from typing import Optional

from gpuarena.store.figures import Figures, Name
from gpuarena.workloads.facts import first_int
from gpuarena.workloads.spec import Param, WorkloadSpec, activation_traffic

# ResNet-50 forward at 224x224: 4.089 GMAC (torchvision's documented 4.09 GFLOPS,
# counted as multiply-adds; torch.utils.flop_counter agrees, see tests).  Training
# = forward + backward (~2x forward) = 3x forward; a FLOP is half a MAC.
RESNET50_FWD_MACS_224 = 4.089e9
# torchvision resnet50() with 1000 classes: sum(p.numel() for p in model.parameters()),
# pinned by tests/workloads against the built model.
RESNET50_PARAMS = 25_557_032
# Activation elements per 224x224 image: the outputs of every convolution, batch norm, ReLU,
# pooling and the classifier of torchvision's resnet50, counted with forward hooks on the meta
# device (docs/projections.md; tests/workloads/test_facts.py recounts it).
RESNET50_ACT_ELEMENTS_224 = 32.0e6

COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


class ResNet50TrainFigures(Figures):
    optimizer: Name = None
    cudnn_benchmark: Optional[bool] = None


class ResNet50TrainSpec(WorkloadSpec):
    name = "resnet50-train"
    runner = "gpuarena.workloads.resnet50_train.run:ResNet50Train"
    figures = ResNet50TrainFigures
    version = 1
    description = "torchvision ResNet-50 training step, SGD lr 0.1, synthetic input, loss = output.sum()"
    item = "image"
    source = "article 000, section 3.1"
    kind = "training"
    axis = "batch_size"
    dominant_op = "conv"
    ddp_name = "resnet50"
    published_as = ("ResNet-50 training (article 000 3.1, torchvision resnet50, SGD lr 0.1)",
                    "ResNet-50 training (DLE PyTorch)", "ResNet-50 v1.5 training (ImageNet)")
    published_family = "ResNet-50 training (DLE PyTorch)"   # Lambda's DLE runs: ImageNet at 224 px
    family_settings = {"image_size": 224}
    finite_fix = "--set loss=cross-entropy"   # the article's loss = output.sum() diverges to NaN
    params = (
        Param("batch_size", int, 256, "images per step", tiny=2, min=1, max=65536),
        Param("image_size", int, 224, "input height and width in pixels", tiny=32, min=16, max=4096),
        Param("lr", float, 0.1, "SGD learning rate (the article's 0.1)", min=0.0, max=100.0),
        Param("compile_mode", str, "default", "torch.compile mode for the compile variant",
              choices=COMPILE_MODES),
        Param("loss", str, "sum", "'sum': the article's loss = output.sum() (diverges to NaN with lr 0.1); "
              "'cross-entropy': against random labels (trains sanely, same arithmetic to within the loss)",
              choices=("sum", "cross-entropy")),
    )
    variants = {
        "seed": "the article's code exactly: FP32 tensors, PyTorch defaults (cuDNN TF32 on, matmul TF32 off)",
        "fp32": "true FP32: TF32 off for matmul and cuDNN",
        "tf32": "TF32 on for matmul and cuDNN (article 001's tip)",
        "amp-bf16": "autocast to bfloat16",
        "amp-fp16": "autocast to float16 with a gradient scaler",
        "channels-last": "NHWC memory format for model and input (tensor-core friendly convolutions)",
        "compile": "torch.compile the model (mode from compile_mode); compile time excluded and recorded",
        "cudnn-benchmark": "torch.backends.cudnn.benchmark = True: cuDNN times its algorithms and keeps the fastest",
        "fused-sgd": "torch.optim.SGD(fused=True): one kernel updates every parameter instead of one per tensor",
    }
    exclusive = (frozenset({"fp32", "tf32", "amp-bf16", "amp-fp16"}),)
    default_warmup = 10
    default_steps = 10

    @classmethod
    def flops(cls, params: dict) -> float:
        scale = (params["image_size"] / 224) ** 2
        return 3 * 2 * RESNET50_FWD_MACS_224 * scale

    @classmethod
    def param_count(cls, params: dict) -> int:
        return RESNET50_PARAMS   # convolutions and the 2048 x 1000 head do not depend on image size

    @classmethod
    def published_params(cls, setting: str) -> dict:
        return {"image_size": first_int(setting) or 224}

    @classmethod
    def bytes_per_item(cls, params: dict, element_bytes: int) -> float:
        return activation_traffic(RESNET50_ACT_ELEMENTS_224 * (params["image_size"] / 224) ** 2, element_bytes,
                                  True, RESNET50_PARAMS, params["batch_size"])
