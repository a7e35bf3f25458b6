"""Where resnet50-infer -v aot-inductor dies (issue 23): each stage of the rung in its own process.

    python3 benchmarks/aoti_diag.py compile DIR [bf16] [nopch] [stdcxx]   # export + AOTI package into DIR, no load
    python3 benchmarks/aoti_diag.py inspect DIR          # the package's wrapper .so: linked libraries, libstdc++ inside
    python3 benchmarks/aoti_diag.py load DIR MODE        # load DIR's package, run it (MODE: inference|no_grad)

Run under ``cuda-gdb -batch -ex run -ex bt --args python3 ...`` for the native stack of a crash.

``stdcxx`` (session 13, written for the next device call, not yet run): the package's wrapper built by a
``g++`` that puts ``-Wl,--no-as-needed -lstdc++`` before everything else, so the wrapper's std:: symbols
bind to the shared libstdc++ (a NEEDED entry) and not to the copies torch's CUDA libraries export.
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
    """A ``g++`` (named so: inductor picks its flags by the name) that links libstdc++ first."""
    import shutil

    real = shutil.which("g++")
    os.makedirs(os.path.join(folder, "bin"), exist_ok=True)
    path = os.path.join(folder, "bin", "g++")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\nexec {real} -Wl,--no-as-needed -lstdc++ -Wl,--as-needed "$@"\n')
    os.chmod(path, 0o755)
    return path


def inspect(path: str, folder: str) -> None:
    import subprocess
    import zipfile

    out = os.path.join(folder, "x")
    zipfile.ZipFile(path).extractall(out)
    for root, _, files in os.walk(out):
        for f in files:
            if f.endswith(".so"):
                so = os.path.join(root, f)
                print("so", f, os.path.getsize(so))
                for cmd in (["readelf", "-d", so], ["sh", "-c", f"nm -C {so} | grep -cE ' [TtWw] std::(locale|__cxx11::regex|codecvt)'"],
                            ["sh", "-c", f"nm -C -D --defined-only {so} | grep -cE 'std::locale'"]):
                    r = subprocess.run(cmd, capture_output=True, text=True)
                    print(" ".join(cmd[-1:] if cmd[0] == "sh" else cmd[:2]), "->",
                          (r.stdout + r.stderr).strip().replace("\n", " | ")[:1500])


if __name__ == "__main__":
    main()
