"""Where resnet50-infer -v aot-inductor dies (issue 23): each stage of the rung in its own process.

    python3 benchmarks/aoti_diag.py compile DIR [bf16] [nopch] [stdcxx]   # export + AOTI package into DIR, no load
    python3 benchmarks/aoti_diag.py inspect DIR          # the package's wrapper .so: linked libraries, libstdc++ inside
    python3 benchmarks/aoti_diag.py load DIR MODE        # load DIR's package, run it (MODE: inference|no_grad)

Run under ``cuda-gdb -batch -ex run -ex bt --args python3 ...`` for the native stack of a crash.

``stdcxx`` (session 14): the package's wrapper built through gpuarena's compiler shim
(deploy.shared_libstdcxx_compiler), which names g++'s shared libstdc++ first on every ``-shared`` link,
so the wrapper needs libstdc++.so.6 and binds its std:: symbols there; every compiler command is logged
to DIR/cxx.log and ``inspect`` prints the links' libraries and the libstdc++ files in their -L folders.
Session 6's diagnosis: the CUDA wrapper needs no libstdc++.so.6 while exporting 282 std::locale symbols,
and it dies in std::regex's locale code; with libstdc++ preloaded it loaded.  PyTorch itself once added
``-lstdc++`` to the AOTI link (pytorch/pytorch#158628 backs it out for an internal toolchain).
"""

from __future__ import annotations

import os
import sys
import time

import torch
import torchvision


def main() -> None:
    stage, folder = sys.argv[1], sys.argv[2]
    path = os.path.join(folder, "resnet50.pt2")
    dt = torch.bfloat16 if "bf16" in sys.argv[3:] else torch.float32
    x = torch.randn(1, 3, 224, 224, device="cuda", dtype=dt)
    t0 = time.perf_counter()
    if stage == "inspect":
        inspect(path, folder)
        return
    if stage == "compile":
        if "nopch" in sys.argv[3:]:
            torch._inductor.config.aot_inductor.precompile_headers = False
        if "stdcxx" in sys.argv[3:]:
            torch._inductor.config.cpp.cxx = (stdcxx_compiler(folder),)
        model = torchvision.models.resnet50().eval().to("cuda", dtype=dt)
        with torch.no_grad():
            ep = torch.export.export(model, (x,))
            print("exported", flush=True)
            out = torch._inductor.aoti_compile_and_package(ep, package_path=path)
        print("packaged", out, os.path.getsize(path), f"{time.perf_counter() - t0:.1f}s", flush=True)
        return
    model = torch._inductor.aoti_load_package(path)
    print("loaded", type(model).__name__, flush=True)
    ctx = torch.inference_mode() if sys.argv[3] == "inference" else torch.no_grad()
    with ctx:
        y = model(x)
        torch.cuda.synchronize()
    print("ran", tuple(y.shape), bool(torch.isfinite(y).all()), flush=True)


def stdcxx_compiler(folder: str) -> str:
    """gpuarena's compiler shim (deploy.shared_libstdcxx_compiler: links name g++'s shared libstdc++
    first), behind a ``g++`` that logs every command to FOLDER/cxx.log for ``inspect``."""
    from gpuarena.workloads import deploy

    shim = deploy.shared_libstdcxx_compiler(os.path.join(folder, "shim"))
    assert shim, "no GCC on this machine"
    os.makedirs(os.path.join(folder, "bin"), exist_ok=True)
    path = os.path.join(folder, "bin", "g++")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\necho "$@" >> {folder}/cxx.log\nexec {shim} "$@"\n')
    os.chmod(path, 0o755)
    return path


def inspect(path: str, folder: str) -> None:
    import subprocess
    import zipfile

    log = os.path.join(folder, "cxx.log")
    if os.path.exists(log):
        for line in open(log):
            if " -shared" in line:
                args = line.split()
                print("link", " ".join(a for a in args if a.startswith(("-l", "-L", "-Wl", "-static", "-shared"))
                                      or a.endswith(".so")))
                for d in [a[2:] for a in args if a.startswith("-L")]:
                    print("  ", d, sorted(f for f in os.listdir(d) if "stdc++" in f) if os.path.isdir(d) else "absent")
    out = os.path.join(folder, "x")
    zipfile.ZipFile(path).extractall(out)
    for root, _, files in os.walk(out):
        for f in files:
            if f.endswith(".so"):
                so = os.path.join(root, f)
                print("so", f, os.path.getsize(so))
                defined = f"nm -C {so} | grep -cE ' [TtWw] std::(locale|__cxx11::regex|codecvt)'"
                for cmd in (["readelf", "-d", so], ["sh", "-c", defined],
                            ["sh", "-c", f"nm -C -D --defined-only {so} | grep -cE 'std::locale'"]):
                    r = subprocess.run(cmd, capture_output=True, text=True)
                    print(" ".join(cmd[-1:] if cmd[0] == "sh" else cmd[:2]), "->",
                          (r.stdout + r.stderr).strip().replace("\n", " | ")[:1500])


if __name__ == "__main__":
    main()
