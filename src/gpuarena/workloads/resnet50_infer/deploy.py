"""Deployment paths of an inference model beyond torch.compile: AOTInductor and TensorRT.

Each refuses, with its one-line cause, where it cannot run (no C++ compiler, no
``torch_tensorrt``, a CPU, a package that would crash the process) instead of failing later.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import torch

from gpuarena.errors import WorkloadSkipped

TENSORRT_HINT = ("pip install torch-tensorrt (the release built for this torch version; "
                 "see pytorch.org/TensorRT)")


def tensorrt_ready(device) -> None:
    try:
        import torch_tensorrt  # noqa: F401
    except ImportError:
        raise WorkloadSkipped(f"torch_tensorrt is not installed: {TENSORRT_HINT}") from None
    if device.type != "cuda":
        raise WorkloadSkipped("TensorRT runs on a CUDA GPU; this is a CPU")


def tensorrt_compile(model, x, dtype):
    import torch_tensorrt

    return torch_tensorrt.compile(model, ir="dynamo", inputs=[x], enabled_precisions={dtype, torch.float16})


def cxx_names() -> list[str]:
    from torch._inductor import config

    names = config.cpp.cxx if isinstance(config.cpp.cxx, (tuple, list)) else (config.cpp.cxx,)
    return [n for n in names if n] + ["g++", "c++", "clang++"]


def cxx() -> str | None:
    return next((shutil.which(n) for n in cxx_names() if shutil.which(n)), None)


def aot_ready() -> None:
    if not cxx():
        raise WorkloadSkipped("AOTInductor needs a C++ compiler to build its package; none found "
                              f"(looked for {', '.join(cxx_names())})")


def aot_package(model, x, name: str = "model"):
    """Export, package, load: (the loaded package, its size in bytes).  The package's folder (the
    weights: about 100 MB for ResNet-50 in FP32) is removed once loaded, as the loader has
    unpacked what it runs into a folder of its own."""
    from torch._inductor import config

    folder = tempfile.mkdtemp(prefix="gpuarena-aoti-")
    try:
        shim = shared_libstdcxx_compiler(folder)
        with torch.no_grad(), config.patch({"cpp.cxx": (shim,)} if shim else {}):
            ep = torch.export.export(model, (x,))
            path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(folder, f"{name}.pt2"))
        size = os.path.getsize(path)
        refuse_static_libstdcxx(path)
        return torch._inductor.aoti_load_package(path), size
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def shared_libstdcxx_compiler(folder: str) -> str | None:
    """A ``g++`` in ``folder`` (named so: inductor picks its flags by the compiler's name) that puts the
    shared libstdc++ this process has loaded (else the compiler's own) first on every ``-shared`` link,
    so the package's wrapper needs libstdc++.so.6 and binds its std:: symbols to the library torch uses.
    None where the compiler is not GCC on Linux, or no shared libstdc++ is found.

    Why (H200, sessions 6 and 14): the machine's compiler is ``CXX=/opt/gcc/bin/g++``, whose links put
    a static libstdc++ into the wrapper; its own std::locale beside torch's crashed in std::regex while
    the package loaded.  With this shim the rung ran at batch 1 and 256 (BENCHMARKS.md, session 14)."""
    real = cxx()
    if sys.platform != "linux" or not real or not os.path.basename(real).endswith("g++") or "clang" in real:
        return None
    found = (subprocess.run([real, f"-print-file-name={n}"], capture_output=True, text=True).stdout.strip()
             for n in ("libstdc++.so", "libstdc++.so.6"))
    lib = loaded_libstdcxx() or next((f for f in found if os.path.isabs(f) and os.path.exists(f)), None)
    if not lib:
        return None
    return linking_gxx(folder, real, f'-Wl,--no-as-needed "{lib}" -Wl,--as-needed')


def linking_gxx(folder: str, real: str, link_args: str) -> str:
    """``folder/bin/g++``: ``real`` with ``link_args`` first on every ``-shared`` link, every other command
    (compiles, precompiled headers, ``--version``) passed through as it is."""
    os.makedirs(os.path.join(folder, "bin"), exist_ok=True)
    path = os.path.join(folder, "bin", "g++")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\ncase " $* " in *" -shared "*) ;; *) exec "{real}" "$@";; esac\n'
                f'exec "{real}" {link_args} "$@"\n')
    os.chmod(path, 0o755)
    return path


def loaded_libstdcxx() -> str | None:
    """The shared libstdc++ mapped into this process (torch loads one), or None."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "/libstdc++.so" in line}
    except OSError:
        return None
    return min(paths) if paths else None


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


def graph_ready(device) -> None:
    if device.type != "cuda":
        raise WorkloadSkipped(f"cuda-graph captures CUDA work; this is a {device.type.upper()}")


class GraphedModel:
    """``model(x)`` captured once as a CUDA graph on its fixed input and replayed per request
    (torch.cuda.graph, as PyTorch's CUDA-graph notes show it): every kernel of the forward is
    launched by one call.  A few eager calls on a side stream first, so lazy initialisation and
    cuDNN's autotuning happen outside the capture."""

    def __init__(self, model, x, warmup: int = 3, verify: int = 4):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side), torch.inference_mode():
            for _ in range(warmup):
                want = model(x)
        torch.cuda.current_stream().wait_stream(side)
        x_before = x.clone()
        # the captured kernels read the model's weights at their addresses: the model must live as long as
        # the graph (H200, session 10: with it freed the replays read reused memory, non-finite from the third)
        self.graph, self.x, self.model = torch.cuda.CUDAGraph(), x, model
        with torch.cuda.graph(self.graph), torch.inference_mode():
            self.out = model(x)
        self._verify(want, x_before, verify)

    def _verify(self, want, x_before, replays: int) -> None:
        """The captured graph must give the eager forward's output on a few replays before any is
        timed; a graph that differs is refused rather than timed.  (It could not catch the graph that
        outlived its model's weights: that drifted only once the freed memory was reused; see __init__.)"""
        for i in range(replays):
            self.graph.replay()
            got = self.out
            if not torch.isfinite(got).all() or not torch.allclose(got.float(), want.float(), rtol=1e-2, atol=1e-2):
                moved = "" if torch.equal(self.x, x_before) else "; the replays also changed the input"
                raise RuntimeError(
                    f"cuda-graph: replay {i + 1} of the captured forward differs from the eager forward "
                    f"({int((~torch.isfinite(got)).sum())} non-finite of {got.numel()} outputs{moved}); "
                    "the graph is not timed")

    def __call__(self, x):
        if x is not self.x:
            raise ValueError("a captured CUDA graph replays on the input it captured")
        self.graph.replay()
        return self.out
