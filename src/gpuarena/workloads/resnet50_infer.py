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

import statistics
import time
import traceback

import torch

from gpuarena.workloads import convfuse, deploy, quant
from gpuarena.workloads.base import Param, Workload, activation_traffic, apply_math_mode, precision_of
from gpuarena.workloads.deploy import refuse_static_libstdcxx  # noqa: F401 - its tests import it from here
from gpuarena.workloads.resnet50 import COMPILE_MODES, RESNET50_ACT_ELEMENTS_224, RESNET50_FWD_MACS_224
from gpuarena.store.workload_figures import ResNet50InferFigures

RESNET50_PARAMS = 25_557_032     # torchvision resnet50(): sum of p.numel()
DEPLOY = ("compile", "aot-inductor", "tensorrt", "cudnn-fused")


class ResNet50Infer(quant.QuantRungs, Workload):
    name = "resnet50-infer"
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
        **{r: quant.VARIANT_DOCS[r] + "; ResNet-50: the 1x1 convolutions (as linears) and the classifier "
           "(fp8 leaves it: 1000 outputs are no multiple of 16); the 3x3 convolutions stay" for r in quant.RUNGS},
    }
    exclusive = (frozenset({"fp32", "tf32", "fp16", "bf16"}), frozenset(DEPLOY),
                 frozenset({"aot-inductor", "tensorrt", *quant.RUNGS}), frozenset({"cudnn-fused", *quant.RUNGS}),
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
        return quant.precision_name(variants, precision_of(frozenset(variants)))

    # --- building -----------------------------------------------------------------------
    measure_accuracy = True     # the extra instances (instance_main) leave it to the case's process

    def dtype(self):
        v = self.ctx.variants
        return torch.float16 if "fp16" in v else torch.bfloat16 if "bf16" in v else torch.float32

    def setup(self) -> None:
        import torchvision

        v = self.ctx.variants
        rung = quant.rung_of(v)
        if "tensorrt" in v:
            deploy.tensorrt_ready(self.device)
        if "aot-inductor" in v:
            deploy.aot_ready()
        if rung:
            quant.require(rung, self.device)
        if "cuda-graph" in v:
            deploy.graph_ready(self.device)
        apply_math_mode(v)
        torch.backends.cudnn.benchmark = "cudnn-benchmark" in v
        bs, size, dt = self.p["batch_size"], self.p["image_size"], self.dtype()
        model = torchvision.models.resnet50().eval().to(self.device)
        x = torch.randn(bs, 3, size, size, device=self.device)
        self.ref = quant.fp32_reference(model, lambda m: m(x)) if self.measure_accuracy else None
        self.fused_convs = None
        if "cudnn-fused" in v:
            model = convfuse.fuse_resnet(model, self.p["stem"])
            self.fused_convs = convfuse.fused_convs(model)   # counted before a graph or compiler wraps it
        model, self.x = model.to(dtype=dt), x.to(dt)
        if "channels-last" in v:
            model = model.to(memory_format=torch.channels_last)
            self.x = self.x.contiguous(memory_format=torch.channels_last)
        self.quant = None
        if rung:
            convs = quant.convs_as_linears(model)
            self.quant = quant.quantize(model, rung)
            self.quant["quantized_layers"]["convs_as_linears"] = convs
        self.build_s = 0.0
        t0 = time.perf_counter()
        if "compile" in v:
            mode = self.p["compile_mode"]
            model = torch.compile(model, mode=None if mode == "default" else mode)
        elif "aot-inductor" in v:
            model, self.package_bytes = deploy.aot_package(model, self.x, "resnet50")
        elif "tensorrt" in v:
            model = deploy.tensorrt_compile(model, self.x, dt)
        elif "cuda-graph" in v:
            model = deploy.GraphedModel(model, self.x)
        self.build_s = time.perf_counter() - t0
        self.model = model
        self.out = None
        self.latencies: list[list[float]] = []
        self.workers: list = []
        self.steps_done = 0
        if self.p["instances"] > 1:
            self._start_instances()

    # --- serving --------------------------------------------------------------------------
    @torch.inference_mode()
    def serve(self, requests: int) -> list[float]:
        """Serve requests back to back; each one's latency (its logits reach the host)."""
        out = []
        for _ in range(requests):
            t0 = time.perf_counter()
            self.out = self.model(self.x).float().cpu()
            out.append(time.perf_counter() - t0)
        return out

    def step(self) -> None:
        if not self.workers:
            self.serve(1)
            return
        k = self.p["instance_requests"]
        for conn, _ in self.workers:
            conn.send(k)
        mine = self.serve(k)
        theirs = [self._receive(conn, i + 1) for i, (conn, _) in enumerate(self.workers)]
        self.steps_done += 1
        if self.steps_done > 1:   # the first step holds this process's compilation
            for i, lat in enumerate([mine] + theirs):
                self.latencies[i].extend(lat)

    def _start_instances(self) -> None:
        import torch.multiprocessing as mp

        ctx = mp.get_context("spawn")     # a CUDA context cannot be forked
        n = self.p["instances"]
        self.latencies = [[] for _ in range(n)]
        for _ in range(n - 1):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=instance_main, daemon=True,
                               args=(child, str(self.device), sorted(self.ctx.variants),
                                     {**self.p, "instances": 1}))
            proc.start()
            self.workers.append((parent, proc))
        for i, (conn, _) in enumerate(self.workers):
            self._receive(conn, i + 1)        # each is built, compiled and warm

    @staticmethod
    def _receive(conn, index: int):
        try:
            kind, body = conn.recv()
        except EOFError:
            raise RuntimeError(f"instance {index} died without a word") from None
        if kind == "error":
            raise RuntimeError(f"instance {index}: {body}")
        return body

    def items_per_step(self) -> float:
        n = self.p["instances"]
        return float(self.p["batch_size"] * (n * self.p["instance_requests"] if n > 1 else 1))

    # --- figures --------------------------------------------------------------------------
    def flops_per_item(self) -> float:
        return self.flops(self.p)

    def precision(self) -> str:
        return self._precision_name(self.ctx.variants, self.device.type)

    def check(self) -> list:
        return quant.output_flags(self.ref, self.out, logits=True)

    def extra(self) -> dict:
        v = self.ctx.variants
        path = "+".join(d for d in (*DEPLOY, "cuda-graph") if d in v) or "eager"
        out = {"deployment": path, "dtype": str(self.dtype()).replace("torch.", ""),
               "build_s": self.build_s, "request": "forward + logits copied to host"}
        if "aot-inductor" in v:
            out["package_bytes"] = self.package_bytes
        out.update(self.quant or {})
        if "cudnn-fused" in v:
            out["fused_convs"] = self.fused_convs
        if self.ref is not None and self.out is not None:
            out["accuracy"] = quant.agreement(self.ref, self.out, logits=True)
        if self.workers:
            per = [{"instance": i, "requests": len(lat), "latency_ms_median": statistics.median(lat) * 1e3,
                    "latency_ms_max": max(lat) * 1e3} for i, lat in enumerate(self.latencies) if lat]
            out.update(instances=self.p["instances"], per_instance=per,
                       instance_latency_ms_median=(statistics.median([x for lat in self.latencies for x in lat]) * 1e3
                                                   if per else None))
        return out


def instance_main(conn, device: str, variants: list[str], params: dict) -> None:
    """One more instance, in its own process: build, warm, then serve when told."""
    from gpuarena.workloads.base import StepContext

    try:
        torch.manual_seed(0)
        dev = torch.device(device)
        if dev.type == "cuda":
            torch.cuda.set_device(dev)
        wl = ResNet50Infer(StepContext(device=dev, variants=frozenset(variants), params=params))
        wl.measure_accuracy = False
        wl.setup()
        wl.serve(2)                       # compilation and lazy initialisation land here
        conn.send(("ready", None))
        while True:
            k = conn.recv()
            conn.send(("done", wl.serve(k)))
    except EOFError:                      # the case's process is gone: so are we
        return
    except BaseException:  # noqa: BLE001 - reported to the case's process, which fails the case
        conn.send(("error", traceback.format_exc(limit=3)[-800:]))
