"""ViT-B/16 inference: torchvision's ``vit_b_16`` (Dosovitskiy et al. 2021, "An Image is Worth
16x16 Words"), random weights, eval under ``inference_mode``; one step is one batch of images.

The FLOPs are counted from the architecture (``vit_flops``): the 16x16 patch embedding, per
encoder layer the Q, K, V and output projections, the MLP and the attention's two products, and
the classifier.  At 224 px that is 17.56 G multiply-adds per image, torchvision's documented
``GFLOPS`` of ``ViT_B_16_Weights.IMAGENET1K_V1`` (17.56, counted as multiply-adds as for
ResNet-50's 4.09), so 35.1 GFLOP; tests/workloads/test_vit.py pins the formula to
``torch.utils.flop_counter`` and the parameter count (86,567,656) to the built model.
"""

from __future__ import annotations

from gpuarena.errors import UserError
from gpuarena.store.figures import Count, Figures, Name
from gpuarena.workloads.resnet50_train.spec import COMPILE_MODES
from gpuarena.workloads.spec import Param, WorkloadSpec, activation_traffic

# ViT-B/16 (torchvision vit_b_16): 12 layers, hidden 768, 12 heads, MLP 3072, 16x16 patches, 1000 classes.
PATCH, LAYERS, HIDDEN, HEADS, MLP, CLASSES = 16, 12, 768, 12, 3072, 1000
PRECISIONS = ("fp32", "tf32", "amp-bf16", "amp-fp16", "bf16", "fp16")


def tokens(image_size: int) -> int:
    """Tokens the encoder sees: one per 16x16 patch, and the class token."""
    return (image_size // PATCH) ** 2 + 1


def vit_macs(image_size: int) -> float:
    """Multiply-adds of one image's forward pass (LayerNorms, GELU and softmax left out: under 0.5%)."""
    t, h = tokens(image_size), HIDDEN
    patches = (t - 1) * (3 * PATCH * PATCH) * h                 # the patch embedding, a strided convolution
    per_layer = 4 * t * h * h + 2 * t * h * MLP + 2 * t * t * h   # projections, MLP, scores and context
    return float(patches + LAYERS * per_layer + h * CLASSES)


def vit_params(image_size: int) -> int:
    """Parameters of vit_b_16: the patch embedding, class token and position embedding (one per
    token, so it grows with the image), 12 layers (two LayerNorms, attention, MLP), the final
    LayerNorm and the classifier.  86,567,656 at 224 px (torchvision's num_params)."""
    h = HIDDEN
    layer = 2 * 2 * h + (3 * h * h + 3 * h) + (h * h + h) + (h * MLP + MLP) + (MLP * h + h)
    return (3 * PATCH * PATCH * h + h) + h + tokens(image_size) * h + LAYERS * layer + 2 * h + (h * CLASSES + CLASSES)


class ViTB16InferFigures(Figures):
    dtype: Name = None          # the dtype of the weights and the input
    tokens: Count = None        # tokens per image (patches + the class token)


class ViTB16InferSpec(WorkloadSpec):
    name = "vit-b16-infer"
    runner = "gpuarena.workloads.vit_b16_infer.run:ViTB16Infer"
    figures = ViTB16InferFigures
    version = 1
    description = "torchvision ViT-B/16 (vit_b_16, random weights) eval under inference_mode; item = image"
    item = "image"
    source = "Dosovitskiy et al. 2021 (ViT-B/16); torchvision vit_b_16, ViT_B_16_Weights: 17.56 GFLOPS (MACs)"
    kind = "inference"
    axis = "batch_size"
    dominant_op = "matmul"
    params = (
        Param("batch_size", int, 64, "images per step", tiny=2, min=1, max=65536),
        Param("image_size", int, 224, "input height and width in pixels (a multiple of 16)", tiny=32,
              min=16, max=4096),
        Param("compile_mode", str, "default", "torch.compile mode for the compile variant", choices=COMPILE_MODES),
    )
    variants = {
        "seed": "PyTorch defaults: FP32 tensors (matmul TF32 off), eager",
        "fp32": "true FP32: TF32 off for matmul and cuDNN",
        "tf32": "TF32 on for matmul and cuDNN",
        "amp-bf16": "autocast to bfloat16",
        "amp-fp16": "autocast to float16",
        "bf16": "model and input cast to bfloat16 (no autocast)",
        "fp16": "model and input cast to float16 (no autocast)",
        "channels-last": "NHWC memory format for the input (the patch embedding is a 16x16 convolution)",
        "compile": "torch.compile the model (mode from compile_mode); compile time recorded apart",
    }
    exclusive = (frozenset(PRECISIONS),)
    default_warmup = 10
    default_steps = 10

    @classmethod
    def check_params(cls, params: dict) -> None:
        if params["image_size"] % PATCH:
            raise UserError(f"image_size={params['image_size']}: ViT-B/16 takes a multiple of {PATCH} pixels")

    @classmethod
    def flops(cls, params: dict) -> float:
        return 2 * vit_macs(params["image_size"])

    @classmethod
    def param_count(cls, params: dict) -> int:
        return vit_params(params["image_size"])

    @classmethod
    def bytes_per_item(cls, params: dict, element_bytes: int) -> float:
        """Per layer and token about 18 x hidden activation elements with fused attention (as BERT's);
        the token x token scores are not counted (SDPA never writes them)."""
        elements = LAYERS * tokens(params["image_size"]) * 18 * HIDDEN
        return activation_traffic(elements, element_bytes, False, cls.param_count(params), params["batch_size"])
