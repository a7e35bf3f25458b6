"""Deployment paths refuse, with their one-line cause, where they cannot run (workloads/resnet50_infer/deploy.py)."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest
import torch

from gpuarena.errors import UserError, WorkloadSkipped
from gpuarena.workloads.resnet50_infer import deploy
from gpuarena.workloads.resnet50_infer.run import ResNet50Infer
from tests.workloads.conftest import static_libstdcxx_gxx

REGEX = """#include <regex>
#include <string>
extern "C" int match(const char* s) { return std::regex_match(std::string(s), std::regex("cuda:[0-9]+")); }
"""


def test_tensorrt_missing_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_tensorrt", None)
    with pytest.raises(WorkloadSkipped, match=r"^torch_tensorrt is not installed: pip install torch-tensorrt"):
        deploy.tensorrt_ready(torch.device("cuda"))


def test_a_cuda_graph_needs_cuda_and_stands_apart_from_the_compilers():
    with pytest.raises(WorkloadSkipped, match="cuda-graph captures CUDA work; this is a CPU"):
        deploy.graph_ready(torch.device("cpu"))
    for spec in ("compile+cuda-graph", "aot-inductor+cuda-graph", "tensorrt+cuda-graph"):
        with pytest.raises(UserError, match="exclude each other"):
            ResNet50Infer.parse_variant(spec)
    assert ResNet50Infer.canonical_variant("cuda-graph+cudnn-fused+bf16+channels-last") == \
        "bf16+channels-last+cudnn-fused+cuda-graph"


def test_the_shim_links_torchs_libstdcxx_where_the_compiler_would_link_its_own(tmp_path):
    """The H200's crash, on a CPU: a library that carries libstdc++ (as its compiler made the AOTI wrapper)
    dies in std::regex inside a torch process and is refused; built through the shim, it needs the shared
    libstdc++ and runs."""
    from torch._inductor import config

    static = static_libstdcxx_gxx(tmp_path)
    # config.patch, not monkeypatch: monkeypatch's undo deletes the attribute, and torch's config then
    # hides cpp.cxx for the rest of the process (a later CPU compile in the same worker died on
    # "torch._inductor.config.cpp.cxx does not exist")
    with config.patch({"cpp.cxx": (static,)}):
        shim = deploy.shared_libstdcxx_compiler(str(tmp_path / "shim"))
    assert shim and open(shim).read().count(static) == 2
    (tmp_path / "m.cpp").write_text(REGEX)
    verdicts = {}
    for name, compiler in (("static", static), ("shim", shim)):
        lib = tmp_path / f"{name}.so"
        subprocess.run([compiler, "-shared", "-fPIC", str(tmp_path / "m.cpp"), "-o", str(lib)], check=True)
        code = f"import torch, ctypes; print(ctypes.CDLL({str(lib)!r}).match(b'cuda:0'))"
        call = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        with zipfile.ZipFile(tmp_path / f"{name}.pt2", "w") as z:
            z.write(lib, "m/data/aotinductor/model/w.wrapper.so")
        try:
            deploy.refuse_static_libstdcxx(str(tmp_path / f"{name}.pt2"))
            verdicts[name] = ("loaded", call.returncode, call.stdout.strip())
        except RuntimeError:
            verdicts[name] = ("refused", call.returncode, call.stdout.strip())
    assert verdicts["shim"] == ("loaded", 0, "1")
    assert verdicts["static"][0] == "refused" and verdicts["static"][1] != 0
