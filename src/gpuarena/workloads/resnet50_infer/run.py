"""ResNet-50 inference's body: setup, the request step and the extra instances (its facts are in spec.py)."""

from __future__ import annotations

import statistics
import time
import traceback

import torch

from gpuarena.workloads import quant, quant_rungs
from gpuarena.workloads.base import Workload, apply_math_mode
from gpuarena.workloads.resnet50_infer import convfuse, deploy
from gpuarena.workloads.resnet50_infer.spec import DEPLOY, ResNet50InferSpec


class ResNet50Infer(ResNet50InferSpec, Workload):
    # --- building -----------------------------------------------------------------------
    measure_accuracy = True     # the extra instances (instance_main) leave it to the case's process

    def dtype(self):
        v = self.ctx.variants
        return torch.float16 if "fp16" in v else torch.bfloat16 if "bf16" in v else torch.float32

    def setup(self) -> None:
        import torchvision

        v = self.ctx.variants
        rung = quant_rungs.rung_of(v)
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
