"""The report sets a workload's fastest measured recipe against the published best its class names."""

from __future__ import annotations

from gpuarena.analysis.rows.published import reference_rows
from gpuarena.report.ladder import against_reference
from gpuarena.store.rows import validated
from gpuarena.workloads.resnet50_infer.run import ResNet50Infer


def _row(variant, thr, device="NVIDIA H200", source="measured", bs=256):
    return validated({"id": int(thr), "case_key": "k", "workload": "resnet50-infer", "status": "ok",
                      "device_name": device, "gpus": 1, "variant": variant,
                      "params": {"batch_size": bs, "image_size": 224}, "precision": "bf16",
                      "throughput_median": thr, "source": source})


def test_mlperf_h200_resnet50_is_a_sourced_reference():
    (ref,) = reference_rows(ResNet50Infer.reference_as)
    assert ref["gpu"] == "NVIDIA H200 SXM 141GB" and ref["per_gpu"] == 94_620 and ref["num_gpus"] == 8
    assert "mlcommons/inference_results_v4.1" in ref["source"] and "H200-SXM-141GBx8_TRT" in ref["source"]


def test_the_fastest_measured_recipe_on_the_same_gpu_is_set_against_it():
    rows = [_row("bf16+channels-last+compile", 23_535.0), _row("seed", 3_679.0),
            _row("bf16+channels-last+compile", 40_000.0, source="published"),     # not ours: left out
            _row("bf16+channels-last+compile", 30_000.0, device="NVIDIA A100-SXM4-80GB")]
    t = against_reference("resnet50-infer", rows, ["batch_size"])
    (only,) = t.rows
    assert only[:5] == ["NVIDIA H200", "bf16+channels-last+compile", "batch_size=256", "bf16", "23,535"]
    assert only[6] == "94,620 (756,960 over 8 GPUs)" and only[7] == "24.9%"
    assert against_reference("resnet50-infer", [_row("seed", 1.0, device="cpu")], []) is None
    assert against_reference("bert-large-infer", rows, []) is None     # its class names no reference
