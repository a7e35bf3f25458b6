"""ResNet-50 inference as deployed: article 001, section 3.3 (issue 17).

torchvision ``resnet50()`` in eval mode under ``inference_mode``.  One step is one
request: a batch through the model and its logits copied back to the host (the
response a client waits for), so at batch 1 the step time is the request's
latency.  The deployment paths a user would try are variants: eager,
``torch.compile`` (mode from compile_mode: max-autotune, or reduce-overhead for
CUDA graphs), AOTInductor (``torch.export``, then an AOT-compiled package loaded
back with ``aoti_load_package`` and timed as the deployed artefact), TensorRT
through ``torch_tensorrt`` (FP16, as the article; skipped where it is not
installed; deploy.py), and ``cudnn-fused``: batch norms folded, ReLU and residual
add in cuDNN's convolution epilogue, the stem as a space-to-depth convolution and a compiled max
pool (convfuse.py; version 2: that stem and the downsamples' biases in their block's epilogue; 3: the
stem's rearrangement compiled).  The low-precision rungs
``int8-weights``, ``int8-dynamic`` and ``fp8-dynamic`` (torchao, quant.py) quantise
the 1x1 convolutions (as linear layers) and the classifier.  Every case measures its
output against the FP32 model's on the same input (``extra.accuracy``).

``instances=N``: N processes share the device, each serving its own stream of
requests with its own model and CUDA context (the article's "multi-instance
inference", without changing the card's settings).  The case's process is
instance 0; N-1 more are started with torch.multiprocessing (spawn) in setup,
each builds, compiles and warms its model, then waits.  A step releases every
instance at once, each serves ``instance_requests`` requests back to back timing
each one, and the step ends when the last instance is done: the runner's window
therefore covers the whole concurrent stretch (aggregate throughput is wall
clock, not a sum of per-process rates) and each instance's request latencies
are kept apart.  Done inside the workload rather than as N runner children so
the one timed window, the telemetry and the statistics stay the runner's.
"""

from __future__ import annotations

from gpuarena.store.figures import Bytes, Count, Ms, Name, Records, Seconds, Text
from gpuarena.workloads import quant_rungs
from gpuarena.workloads.figures import Quantized
from gpuarena.workloads.precision import precision_of
from gpuarena.workloads.resnet50_train.spec import COMPILE_MODES, RESNET50_ACT_ELEMENTS_224, RESNET50_FWD_MACS_224
from gpuarena.workloads.spec import Param, WorkloadSpec, activation_traffic

RESNET50_PARAMS = 25_557_032     # torchvision resnet50(): sum of p.numel()
DEPLOY = ("compile", "aot-inductor", "tensorrt", "cudnn-fused")


class ResNet50InferFigures(Quantized):
    deployment: Name = None
    dtype: Name = None
    build_s: Seconds = None
    request: Text = None
    package_bytes: Bytes = None
    fused_convs: Count = None
    instances: Count = None
    per_instance: Records = None
    instance_latency_ms_median: Ms = None


class ResNet50InferSpec(quant_rungs.QuantRungs, WorkloadSpec):
    name = "resnet50-infer"
    runner = "gpuarena.workloads.resnet50_infer.run:ResNet50Infer"
    figures = ResNet50InferFigures
    version = 4     # 4: check() flags an output far from the FP32 reference (quant.output_flags)
    description = "torchvision ResNet-50 eval under inference_mode; one request = a batch and its logits to host"
    item = "image"
    source = "article 001, section 3.3 (deployment: TensorRT at batch 1, multi-instance inference)"
    kind = "inference"
    axis = "batch_size"
    rank_aggregate = "sum"
    published_as: tuple[str, ...] = ()
    # Published figures of other engines this work is set against in the report (not the same
    # recipe, so never compared as one): MLPerf's offline ResNet-50, INT8 under TensorRT.
    reference_as: tuple[str, ...] = ("MLPerf Inference v4.1 ResNet-50 Offline",)
    dominant_op = "conv"
    params = (
        Param("batch_size", int, 1, "images per request (1: the article's TensorRT latency case)", min=1, max=65536),
        Param("image_size", int, 224, "input height and width in pixels", tiny=32, min=16, max=4096),
        Param("compile_mode", str, "default", "torch.compile mode for the compile variant", choices=COMPILE_MODES),
        Param("stem", str, "s2d", "with cudnn-fused: the 7x7 stem as a 4x4 convolution over 2x2 blocks and a compiled "
              "max pool (s2d; H200 batch 256: 1.33 ms against 2.79), or as built (plain)", choices=("s2d", "plain")),
        Param("instances", int, 1, "processes sharing the device, each serving its own request stream",
              min=1, max=64),
        Param("instance_requests", int, 20, "with instances > 1: requests each instance serves per step",
              tiny=2, min=1, max=100000),
    )
    variants = {
        "seed": "PyTorch defaults: FP32 tensors (cuDNN TF32 on, matmul TF32 off), eager",
        "fp32": "true FP32: TF32 off for matmul and cuDNN",
        "tf32": "TF32 on for matmul and cuDNN",
        "fp16": "model and input in float16 (half weights)",
        "bf16": "model and input in bfloat16",
        "channels-last": "NHWC memory format for model and input",
        "cudnn-benchmark": "torch.backends.cudnn.benchmark = True: cuDNN times its algorithms and keeps the fastest",
        "compile": "torch.compile the model (mode from compile_mode)",
        "aot-inductor": "torch.export, AOTInductor package (aoti_compile_and_package), loaded and timed",
        "tensorrt": "torch_tensorrt.compile with FP16 kernels enabled; skipped where torch_tensorrt is missing",
        "cudnn-fused": "batch norms folded into the convolutions (exact in eval), ReLU and residual add in cuDNN's "
                       "fused epilogue (torch.cudnn_convolution_relu / _add_relu): one kernel per convolution, "
                       "eager (the ops cannot be traced); plain ops on a CPU",
        "cuda-graph": "the forward captured once as a CUDA graph and replayed per request (torch.cuda.graph): "
                      "one launch for every kernel, for the eager paths (compile has compile_mode=reduce-overhead); "
                      "skipped on a CPU",
        **{r: quant_rungs.VARIANT_DOCS[r] + "; ResNet-50: the 1x1 convolutions (as linears) and the classifier "
           "(fp8 leaves it: 1000 outputs are no multiple of 16); the 3x3 convolutions stay" for r in quant_rungs.RUNGS},
    }
    exclusive = (frozenset({"fp32", "tf32", "fp16", "bf16"}), frozenset(DEPLOY),
                 frozenset({"aot-inductor", "tensorrt", *quant_rungs.RUNGS}),
                 frozenset({"cudnn-fused", *quant_rungs.RUNGS}),
                 frozenset({"cuda-graph", "compile", "aot-inductor", "tensorrt"}))
    default_warmup = 20
    default_steps = 20
    tiny_warmup = 1
    tiny_steps = 2

    # --- pure class facts -------------------------------------------------------------
    @classmethod
    def flops(cls, params: dict) -> float:
        return 2 * RESNET50_FWD_MACS_224 * (params["image_size"] / 224) ** 2

    @classmethod
    def param_count(cls, params: dict) -> int:
        return RESNET50_PARAMS

    @classmethod
    def bytes_per_item(cls, params: dict, element_bytes: int) -> float:
        return activation_traffic(RESNET50_ACT_ELEMENTS_224 * (params["image_size"] / 224) ** 2, element_bytes,
                                  False, RESNET50_PARAMS, params["batch_size"])

    @classmethod
    def executed_precision(cls, variants, arch: str | None, params: dict | None = None) -> dict[str, str]:
        """TensorRT's engine runs in its one precision; eager recipes follow PyTorch's rules; a dynamic
        rung runs the 1x1 convolutions and the classifier as int8 / fp8 matmuls, the rest as before."""
        if "tensorrt" in variants and "bf16" not in variants:
            return dict.fromkeys(("matmul", "conv", "attention", "elementwise"), "fp16")
        return super().executed_precision(frozenset(variants), arch, params)

    @classmethod
    def _precision_name(cls, variants, arch: str | None) -> str:
        if "tensorrt" in variants and "bf16" not in variants:
            return "fp16"
        return quant_rungs.precision_name(variants, precision_of(frozenset(variants)))
