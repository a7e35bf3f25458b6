"""A small stored run for the report tests: results written through the Store API with
realistic figures (an H200's ResNet-50 and DDP numbers of the right order), not measurements."""

from __future__ import annotations

import pytest

from gpuarena.measure import stats
from gpuarena.store.db import Store

RUN_ID = "20250101-120000-abcdef"
CREATED = "2025-01-01T12:00:00+00:00"
FINGERPRINT = {
    "hostname": "gpu-node-1", "os": "Linux-6.8.0-x86_64-with-glibc2.39", "python": "3.11.9",
    "cpu": "Intel(R) Xeon(R) Platinum 8480+", "cpu_count": 224,
    "libraries": {"torch": "2.5.1", "torchvision": "0.20.1"}, "torch_cuda": "12.4", "cudnn": 90100,
    "cuda_available": True, "gpus": [{"index": i, "name": "NVIDIA H200"} for i in range(4)],
    "gpu_count": 4, "gpu_name": "NVIDIA H200", "driver": "550.127.05",
}

# (variant, batch, seconds per step of each of 5 repeats, peak memory GiB)
RESNET = [
    ("seed", 64, [0.0301, 0.0303, 0.0300, 0.0302, 0.0304], 9.6),
    ("seed", 128, [0.0571, 0.0574, 0.0569, 0.0572, 0.0570], 18.1),
    ("seed", 256, [0.1102, 0.1108, 0.1099, 0.1105, 0.1101], 35.2),
    ("amp-bf16+channels-last", 64, [0.0121, 0.0122, 0.0120, 0.0121, 0.0123], 5.1),
    ("amp-bf16+channels-last", 128, [0.0224, 0.0226, 0.0223, 0.0225, 0.0224], 9.8),
    ("amp-bf16+channels-last", 256, [0.0431, 0.0433, 0.0430, 0.0434, 0.0432], 19.0),
    ("tf32", 256, [0.0795, 0.0797, 0.0794, 0.0799, 0.0796], 35.1),
]
RESNET_FLOPS = 3 * 2 * 4.089e9   # resnet50_train/spec.py: training = 3x forward, 2 FLOP per MAC


def telemetry(n: int = 40, throttle_from: int = 28) -> list[dict]:
    """A power ramp to the 700 W cap where the clock drops and the power-cap bit (0x4) is set."""
    out = []
    for i in range(n):
        capped = i >= throttle_from
        out.append({"t": round(i * 0.1, 2), "power_w": 690.0 if capped else 420.0 + 9 * i,
                    "temp_c": 48 + i * 0.4, "sm_clock_mhz": 1680 if capped else 1980,
                    "mem_clock_mhz": 3201, "util_pct": 100, "reasons": 0x4 if capped else 0})
    return out


def result(workload, variant, params, samples, items, unit, gpus=1, **kw) -> dict:
    thr = stats.summarize([items / s for s in samples], unit=unit)
    r = {"run_id": RUN_ID, "case_key": f"{workload}|{variant}|{params}|{gpus}", "source": "measured",
         "workload": workload, "workload_version": 1, "code_hash": "0123abcd", "variant": variant,
         "params": params, "size": "full", "gpus": gpus, "device": "cuda", "device_name": "NVIDIA H200",
         "status": "ok", "unit": unit, "throughput_median": thr.median, "throughput": thr.to_dict(),
         "latency": stats.summarize(samples, unit="s/step").to_dict(), "samples": samples,
         "items_per_step": items, "warnings": stats.warnings_for(thr), "extra": {},
         "created_at": CREATED}
    r.update(kw)
    return r


def fill(store: Store) -> None:
    env = store.env_id(FINGERPRINT)
    plan = [{"workload": "resnet50-train", "variant": v, "params": {"batch_size": b}, "repeats": 5,
             "warmup": 10, "steps": 10, "timeout_s": 1800.0, "size": "full", "device": "cuda", "gpus": 1}
            for v, b, _, _ in RESNET]
    store.create_run("seed-resnet50", "cuda", plan, env, argv=["run"], run_id=RUN_ID)
    store.conn.execute("UPDATE runs SET created_at=?, status='complete' WHERE id=?", (CREATED, RUN_ID))
    for variant, batch, samples, gib in RESNET:
        thr_median = stats.summarize([batch / s for s in samples]).median
        longest = variant == "seed" and batch == 256
        store.add_result(result(
            "resnet50-train", variant, {"batch_size": batch, "image_size": 224}, samples, batch, "images/s",
            env_id=env, precision="bf16" if "bf16" in variant else "tf32" if variant == "tf32" else "default",
            flops_per_item=RESNET_FLOPS, tflops=thr_median * RESNET_FLOPS / 1e12,
            peak_memory_bytes=int(gib * 2**30), power_w_mean=560.0 + batch / 4, power_w_max=690.0,
            energy_j_per_item=(560.0 + batch / 4) / thr_median, temp_c_max=63.6 if longest else 55.0,
            telemetry=telemetry() if longest else telemetry(10, 99), throttled=longest,
            extra={"throttle_reasons": ["sw_power_cap"]} if longest else {},
            warnings=(["GPU throttled during the timed window: sw_power_cap"] if longest else [])))
    oom = result("resnet50-train", "seed", {"batch_size": 1024, "image_size": 224}, [1.0], 1, "images/s",
                 env_id=env, status="oom", throughput_median=None, throughput=None, latency=None, warnings=[],
                 error="CUDA out of memory. Tried to allocate 6.13 GiB")
    oom["samples"] = None
    store.add_result(oom)
    # data-parallel scaling: the job's images/s over 1, 2 and 4 GPUs
    for n, step in ((1, 0.1102), (2, 0.1150), (4, 0.1198)):
        store.add_result(result("ddp-train", "seed", {"batch_size": 256, "model": "resnet50"},
                                [step * f for f in (1.0, 1.004, 0.998, 1.002, 1.001)], 256 * n, "images/s",
                                gpus=n, env_id=env, extra={"predicted_efficiency": 1.0 if n == 1 else 0.97 - 0.02 * n}))
    # the same ResNet-50 cases on an A100 (one more machine), for the comparison section
    env_a100 = store.env_id({**FINGERPRINT, "hostname": "gpu-node-2",
                             "gpus": [{"index": 0, "name": "NVIDIA A100-SXM4-80GB"}],
                             "gpu_name": "NVIDIA A100-SXM4-80GB", "gpu_count": 1})
    for variant, batch, samples, gib in RESNET[:3]:
        slower = [s * 1.62 for s in samples]
        store.add_result(result("resnet50-train", variant, {"batch_size": batch, "image_size": 224}, slower, batch,
                                "images/s", env_id=env_a100, device_name="NVIDIA A100-SXM4-80GB", precision="default",
                                peak_memory_bytes=int(gib * 2**30), power_w_mean=380.0, power_w_max=400.0))
    # SD v1.5: the article's 50-step latency at batch 1 (seconds per image is the headline), and a
    # maximum-concurrency search at 10 steps in which every batch up to the cap of 256 fitted
    sd = {"batch_size": 1, "inference_steps": 50, "search": "none", "search_max": 256}
    for variant, step in (("seed", 1.59), ("sdpa+compile", 0.418)):
        store.add_result(result("sd15-generate", variant, sd, [step * f for f in (1.0, 1.01, 0.99, 1.02, 0.995)], 1,
                                "images/s", env_id=env, precision="fp16", flops_per_item=84.5e12,
                                tflops=84.5e12 / step / 1e12, power_w_mean=300.0))
    store.add_result(result("sd15-generate", "seed", {**sd, "inference_steps": 10, "search": "max-batch"},
                            [20.65], 256, "images/s", env_id=env, precision="fp16", flops_per_item=16.9e12,
                            tflops=256 / 20.65 * 16.9e12 / 1e12, peak_memory_bytes=98 * 2**30,
                            extra={"max_batch": 256, "capped": True, "search_steps": 2, "batch": 256}))
    for mb, bw in ((1, 38.0), (16, 190.0), (256, 355.0)):
        store.add_result(result("allreduce", "seed", {"size_mb": mb, "dtype": "bfloat16"},
                                [0.001, 0.0011, 0.001], 1, "ops/s", gpus=4, env_id=env,
                                extra={"busbw_gbs": bw, "algbw_gbs": bw / 1.5, "size_bytes": mb * 2**20}))


@pytest.fixture
def report_db(tmp_path):
    path = str(tmp_path / "report.db")
    store = Store(path)
    fill(store)
    store.close()
    return path
