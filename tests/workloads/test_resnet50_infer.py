"""resnet50-infer at tiny size through the real runner: eager, instances=2, TensorRT skipped."""

from __future__ import annotations

import pytest

from gpuarena.workloads.resnet50_infer.run import ResNet50Infer
from tests.workloads.conftest import assert_ok, run_entries, static_libstdcxx_gxx


def test_eager_instances_and_tensorrt(db_path):
    rs = run_entries(db_path, [
        {"workload": "resnet50-infer", "variants": ["seed", "tensorrt"]},
        {"workload": "resnet50-infer", "variants": ["bf16+channels-last"], "params": {"instances": 2}},
    ], repeats=2)
    seed, trt, multi = rs
    assert_ok(seed)
    assert seed.unit == "images/s" and seed.items_per_step == 1
    assert seed.flops_per_item == pytest.approx(2 * 4.089e9 * (32 / 224) ** 2)
    assert seed.extra.deployment == "eager"
    assert trt.status == "skipped"
    assert trt.error.startswith("torch_tensorrt is not installed: pip install torch-tensorrt")
    assert_ok(multi)
    e = multi.extra
    # 2 instances x 2 requests each per step, batch 1; every timed request's latency kept per instance
    assert multi.items_per_step == 4 and multi.precision == "bf16"
    assert e.instances == 2 and [p["instance"] for p in e.per_instance] == [0, 1]
    # first step excluded; then 1 warm-up and 2 windows of 2 steps, 2 requests each
    assert all(p["requests"] == (1 + 2 * 2) * 2 for p in e.per_instance)
    assert all(p["latency_ms_median"] > 0 for p in e.per_instance)


def test_class_facts_need_no_model():
    p = ResNet50Infer.resolve_params({})
    assert p["batch_size"] == 1 and p["image_size"] == 224
    assert ResNet50Infer.flops(p) == pytest.approx(2 * 4.089e9)
    assert ResNet50Infer.executed_precision(frozenset({"tensorrt"}), "cuda")["conv"] == "fp16"
    assert ResNet50Infer.executed_precision(frozenset({"bf16", "channels-last"}), "cuda")["conv"] == "bf16"
    assert ResNet50Infer.param_count(p) == 25_557_032


@pytest.mark.slow
def test_aot_inductor_package_with_a_compiler_that_links_libstdcxx_statically(db_path, tmp_path):
    """The H200 machine's CXX (/opt/gcc/bin/g++) put libstdc++ inside the package's wrapper, which crashed
    on loading (sessions 6-13); a compiler that does the same here must still give a package that runs."""
    cxx = static_libstdcxx_gxx(tmp_path)
    (r,) = run_entries(db_path, [{"workload": "resnet50-infer", "variants": ["aot-inductor"]}], repeats=1,
                       env={"CXX": cxx})
    assert_ok(r)
    assert r.extra.deployment == "aot-inductor" and r.extra.package_bytes > 0


def test_a_wrapper_with_its_own_libstdcxx_is_refused_not_loaded(tmp_path):
    import zipfile

    from gpuarena.workloads.resnet50_infer.deploy import refuse_static_libstdcxx

    ok, bad = tmp_path / "ok.pt2", tmp_path / "bad.pt2"
    with zipfile.ZipFile(ok, "w") as z:     # what a CPU build makes: libstdc++ linked as a shared library
        z.writestr("m/data/aotinductor/model/w.wrapper.so", b"\x7fELF libstdc++.so.6 _ZNSt6locale5facet")
    with zipfile.ZipFile(bad, "w") as z:    # what the H200 build made (torch 2.11): std::locale inside
        z.writestr("m/data/aotinductor/model/w.wrapper.so", b"\x7fELF libtorch.so _ZNSt6locale5facet")
    refuse_static_libstdcxx(str(ok))
    with pytest.raises(RuntimeError, match="statically"):
        refuse_static_libstdcxx(str(bad))
