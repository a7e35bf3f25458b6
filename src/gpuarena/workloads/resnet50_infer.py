"""ResNet-50 inference as deployed: article 001, section 3.3 (issue 17).

torchvision ``resnet50()`` in eval mode under ``inference_mode``.  One step is one
request: a batch through the model and its logits copied back to the host (the
response a client waits for), so at batch 1 the step time is the request's
latency.  The deployment paths a user would try are variants: eager,
``torch.compile`` (mode from compile_mode: max-autotune, or reduce-overhead for
CUDA graphs), AOTInductor (``torch.export``, then an AOT-compiled package loaded
back with ``aoti_load_package`` and timed as the deployed artefact), and TensorRT
through ``torch_tensorrt`` (FP16, as the article; skipped where it is not
installed).

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

import os
import shutil
import statistics
import tempfile
import time
import traceback

import torch

from gpuarena.workloads.base import Param, Workload, activation_traffic, apply_math_mode, precision_of
from gpuarena.workloads.resnet50 import COMPILE_MODES, RESNET50_ACT_ELEMENTS_224, RESNET50_FWD_MACS_224
from gpuarena.store.flags import nan_flag

RESNET50_PARAMS = 25_557_032     # torchvision resnet50(): sum of p.numel()
DEPLOY = ("compile", "aot-inductor", "tensorrt")


class ResNet50Infer(Workload):
    name = "resnet50-infer"
    version = 1
    description = "torchvision ResNet-50 eval under inference_mode; one request = a batch and its logits to host"
    item = "image"
    source = "article 001, section 3.3 (deployment: TensorRT at batch 1, multi-instance inference)"
    kind = "inference"
    axis = "batch_size"
    rank_aggregate = "sum"
    published_as: tuple[str, ...] = ()
    dominant_op = "conv"
    params = (
        Param("batch_size", int, 1, "images per request (1: the article's TensorRT latency case)", min=1, max=65536),
        Param("image_size", int, 224, "input height and width in pixels", tiny=32, min=16, max=4096),
        Param("compile_mode", str, "default", "torch.compile mode for the compile variant", choices=COMPILE_MODES),
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
        "compile": "torch.compile the model (mode from compile_mode)",
        "aot-inductor": "torch.export, AOTInductor package (aoti_compile_and_package), loaded and timed",
        "tensorrt": "torch_tensorrt.compile with FP16 kernels enabled; skipped where torch_tensorrt is missing",
    }
    exclusive = (frozenset({"fp32", "tf32", "fp16", "bf16"}), frozenset(DEPLOY))
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
        """TensorRT's engine runs in its one precision; eager recipes follow PyTorch's rules."""
        if "tensorrt" in variants and "bf16" not in variants:
            return dict.fromkeys(("matmul", "conv", "attention", "elementwise"), "fp16")
        return super().executed_precision(frozenset(variants), arch, params)

    @classmethod
    def _precision_name(cls, variants, arch: str | None) -> str:
        if "tensorrt" in variants and "bf16" not in variants:
            return "fp16"
        return precision_of(frozenset(variants))

    # --- building -----------------------------------------------------------------------
    def dtype(self):
        v = self.ctx.variants
        return torch.float16 if "fp16" in v else torch.bfloat16 if "bf16" in v else torch.float32

    def setup(self) -> None:
        import torchvision

        from gpuarena.errors import WorkloadSkipped

        v = self.ctx.variants
        if "tensorrt" in v:
            try:
                import torch_tensorrt  # noqa: F401
            except ImportError:
                raise WorkloadSkipped("torch_tensorrt is not installed") from None
            if self.device.type != "cuda":
                raise WorkloadSkipped("TensorRT runs on a CUDA GPU; this is a CPU")
        if "aot-inductor" in v and not self._cxx():
            raise WorkloadSkipped("AOTInductor needs a C++ compiler to build its package; none found "
                                  f"(looked for {', '.join(self._cxx_names())})")
        apply_math_mode(v)
        bs, size, dt = self.p["batch_size"], self.p["image_size"], self.dtype()
        model = torchvision.models.resnet50().eval().to(self.device, dtype=dt)
        self.x = torch.randn(bs, 3, size, size, device=self.device, dtype=dt)
        if "channels-last" in v:
            model = model.to(memory_format=torch.channels_last)
            self.x = self.x.contiguous(memory_format=torch.channels_last)
        self.build_s = 0.0
        t0 = time.perf_counter()
        if "compile" in v:
            mode = self.p["compile_mode"]
            model = torch.compile(model, mode=None if mode == "default" else mode)
        elif "aot-inductor" in v:
            model = self._aot_package(model)
        elif "tensorrt" in v:
            import torch_tensorrt

            model = torch_tensorrt.compile(model, ir="dynamo", inputs=[self.x],
                                           enabled_precisions={dt, torch.float16})
        self.build_s = time.perf_counter() - t0
        self.model = model
        self.out = None
        self.latencies: list[list[float]] = []
        self.workers: list = []
        self.steps_done = 0
        if self.p["instances"] > 1:
            self._start_instances()

    @staticmethod
    def _cxx_names() -> list[str]:
        from torch._inductor import config

        names = config.cpp.cxx if isinstance(config.cpp.cxx, (tuple, list)) else (config.cpp.cxx,)
        return [n for n in names if n] + ["g++", "c++", "clang++"]

    def _cxx(self) -> str | None:
        return next((shutil.which(n) for n in self._cxx_names() if shutil.which(n)), None)

    def _aot_package(self, model):
        """Export, package, load; the package's folder (the weights: about 100 MB in FP32) is
        removed once loaded, as the loader has unpacked what it runs into a folder of its own."""
        folder = tempfile.mkdtemp(prefix="gpuarena-aoti-")
        try:
            with torch.no_grad():
                ep = torch.export.export(model, (self.x,))
                path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(folder, "resnet50.pt2"))
            self.package_bytes = os.path.getsize(path)
            refuse_static_libstdcxx(path)
            return torch._inductor.aoti_load_package(path)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

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
        if self.out is not None and not torch.isfinite(self.out).all().item():
            return [nan_flag("output has NaN/inf")]
        return []

    def extra(self) -> dict:
        v = self.ctx.variants
        path = next((d for d in DEPLOY if d in v), "eager")
        out = {"deployment": path, "dtype": str(self.dtype()).replace("torch.", ""),
               "build_s": self.build_s, "request": "forward + logits copied to host"}
        if "aot-inductor" in v:
            out["package_bytes"] = self.package_bytes
        if self.workers:
            per = [{"instance": i, "requests": len(lat), "latency_ms_median": statistics.median(lat) * 1e3,
                    "latency_ms_max": max(lat) * 1e3} for i, lat in enumerate(self.latencies) if lat]
            out.update(instances=self.p["instances"], per_instance=per,
                       instance_latency_ms_median=(statistics.median([x for lat in self.latencies for x in lat]) * 1e3
                                                   if per else None))
        return out


def refuse_static_libstdcxx(package: str) -> None:
    """Fail with the reason, not a SIGSEGV, where the package's wrapper library carries its own
    libstdc++: seen on the H200 with torch 2.11 (BENCHMARKS.md, session 6), its wrapper.so names no
    libstdc++.so.6 among its needed libraries yet defines std::locale's internals, and loading it
    beside torch's shared libstdc++ crashed in std::regex (parse_device_str) under
    AOTInductorModelContainerCreateWithDevice, at every batch size."""
    import zipfile

    with zipfile.ZipFile(package) as z:
        for name in z.namelist():
            if name.endswith(".so"):
                data = z.read(name)
                if b"libstdc++.so.6" not in data and b"_ZNSt6locale" in data:
                    raise RuntimeError(
                        f"AOTInductor linked libstdc++ statically into {os.path.basename(name)}: loading it next "
                        "to torch's shared libstdc++ crashes (SIGSEGV in std::regex); not loaded")


def instance_main(conn, device: str, variants: list[str], params: dict) -> None:
    """One more instance, in its own process: build, warm, then serve when told."""
    from gpuarena.workloads.base import StepContext

    try:
        torch.manual_seed(0)
        dev = torch.device(device)
        if dev.type == "cuda":
            torch.cuda.set_device(dev)
        wl = ResNet50Infer(StepContext(device=dev, variants=frozenset(variants), params=params))
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
