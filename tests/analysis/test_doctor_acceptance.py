"""Doctor and fleet as an acceptance test, on synthetic evidence of one H100 host with nothing else in
the database: a half-speed device copy and a Gen4-speed host link on a Gen5 card are named slow, a
healthy host is not, wrong GEMM results are named wrong with the GPU; `fleet` reads the bundles and
exits 0 / 1 / 2; the burn-in summary, the link verdicts and the error counters' rules."""

from __future__ import annotations

import copy
import json
import os

import pytest

from gpuarena.analysis.verbs import acceptance as A
from gpuarena.analysis.verbs import doctor as D
from gpuarena.measure import health as H
from gpuarena.runner import burnin
from gpuarena.store import bundle as B
from gpuarena.store.rows import validated

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
H100 = "NVIDIA H100 80GB HBM3"
MATMUL = 2.0 * 8192 ** 3
HEALTHY = {("membw", None): 2950.0, ("h2d", True): 52.8, ("d2h", True): 52.8, ("matmul", "bf16"): 680.0}
SLOW = {**HEALTHY, ("membw", None): 1622.0, ("h2d", True): 30.0}     # half the HBM3 rate; Gen4 on a Gen5 card


def _evidence(bad_gemm: int = 0) -> dict:
    zeros = {"available": True, "ecc_uncorrected": 0, "ecc_corrected": 0, "rows_remapped_corrected": 0,
             "rows_remapped_uncorrected": 0, "row_remap_pending": False, "row_remap_failed": False,
             "retired_pages_dbe": None, "retired_pages_sbe": None}
    gemm = [{"dtype": dt, "n": 8192, "results": 20, "bad_results": bad_gemm if dt == "bf16" else 0,
             "bad_elements": 7 * bad_gemm if dt == "bf16" else 0, "reference_ok": True} for dt in ("fp32", "bf16")]
    return {"level": "quick", "minutes": None, "links": {"skipped": "peer copies need two or more CUDA GPUs; "
                                                                     "this run has 1"},
            "gpus": {"cuda:0": {"device": "cuda:0", "uuid": "GPU-rent01-0", "counters_before": zeros,
                                "counters_after": zeros, "counter_changes": {}, "xid": [], "gemm": gemm,
                                "memtest": {"bytes_tested": 120e9, "passes": 4, "bad_words": 0}}}}


def _bundle(figures: dict, evidence: dict | None = None, host: str = "rent01") -> dict:
    """One H100 host's doctor bundle, its rows taken from the shipped H200 bundle and set to ``figures``."""
    src = json.load(open(os.path.join(ROOT, "docs", "data", "h200-2026-11-29.json")))
    env = copy.deepcopy(next(e for e in src["environments"] if e["id"] == 2))
    env["fingerprint"]["hostname"] = host
    env["fingerprint"]["gpus"] = [dict(env["fingerprint"]["gpus"][0], name=H100, uuid=f"GPU-{host}-0")]
    rows = []
    for (workload, key), value in figures.items():
        r = copy.deepcopy(next(r for r in src["results"] if r["workload"] == workload and r["device"] == "cuda"
                               and (key is None or r["params"].get("pinned", r["params"].get("dtype")) == key)
                               and r["params"].get("m", 8192) == 8192))
        per_s = value * 1e12 / MATMUL if workload == "matmul" else value
        r.update(device="cuda:0", device_name=H100, throughput_median=per_s, run_id=f"20261204-000000-{host}",
                 uid=f"{host}-{workload}-{key}", tflops=value if workload == "matmul" else r.get("tflops"))
        r["throughput"].update(median=per_s, mean=per_s, ci95_low=per_s * 0.99, ci95_high=per_s * 1.01)
        rows.append(r)
    out = {**{k: src[k] for k in ("format", "version", "created_at")}, "environments": [env], "results": rows}
    if evidence is not None:
        out["doctor"] = {"level": "quick", "acceptance": evidence}
    out["sha256"] = B.content_hash(out)
    return out


def _verdicts(b: dict) -> dict:
    rows = [validated(r) for r in b["results"]]
    fp = b["environments"][0]["fingerprint"]
    return D.verdicts(rows, rows, fp, lambda eid: fp, (b.get("doctor") or {}).get("acceptance"))


def test_a_half_speed_copy_and_a_gen4_link_on_a_gen5_card_are_slow_alone_in_the_database():
    v = _verdicts(_bundle(SLOW, _evidence()))
    (gpu,) = v.gpus
    assert gpu.verdict == "SLOW" and v.verdict == "SLOW" and D.exit_code(v) == 1
    slow = {c.check for c in gpu.checks if c.below}
    assert slow == {"membw", "h2d pinned"}
    assert any(w.startswith("membw 0.5") for w in gpu.why) and any(w.startswith("h2d pinned 0.") for w in gpu.why)
    matmul = next(c for c in gpu.checks if c.check == "matmul bf16")
    assert matmul.unit == "TFLOP/s" and matmul.value == pytest.approx(680.0) and 700 < matmul.expected < 900


def test_a_healthy_host_is_ok():
    v = _verdicts(_bundle(HEALTHY, _evidence()))
    (gpu,) = v.gpus
    assert gpu.verdict == "OK" and not gpu.why and D.exit_code(v) == 0
    assert gpu.acceptance.gemm_results_checked == 40 and gpu.acceptance.memtest_gb == 120


def test_wrong_gemm_results_make_the_gpu_wrong_and_named():
    v = _verdicts(_bundle(HEALTHY, _evidence(bad_gemm=3)))
    (gpu,) = v.gpus
    assert gpu.verdict == "WRONG" and D.exit_code(v) == 1
    assert gpu.why == ["GEMM bf16: 3 of 20 results wrong (21 elements differ from the exact reference)"]


@pytest.mark.parametrize("figures,evidence,code,named", [
    (HEALTHY, _evidence(), 0, None),
    (SLOW, _evidence(), 1, "SLOW"),
    (HEALTHY, _evidence(bad_gemm=2), 1, "WRONG"),
])
def test_fleet_names_the_slow_and_wrong_gpus_from_bundles_and_exits_by_them(cli, tmp_path, figures, evidence,
                                                                         code, named):
    path = tmp_path / "rent01.json"
    path.write_text(json.dumps(_bundle(figures, evidence)))
    out = cli("fleet", str(path), "--format", "json")
    assert out.returncode == code, out.stderr
    v = json.loads(out.stdout)
    if named is None:
        assert v["named"] == {"gpus": [], "links": [], "exit_code": 0}
    else:
        (gpu,) = v["named"]["gpus"]
        assert gpu["unit"] == "rent01/cuda:0 (GPU-rent01-0)" and all(w.startswith(named) for w in gpu["why"])
    (host,) = v["hosts_verdicts"]
    assert host["host"] == "rent01" and host["gpus"][0]["verdict"] == (named or "OK")
    table = cli("fleet", str(path))
    assert table.returncode == code and ("rent01/cuda:0" in table.stdout) == bool(named)


def test_fleet_refuses_a_changed_bundle_and_a_bad_use(cli, tmp_path):
    b = _bundle(HEALTHY, _evidence())
    b["results"][0]["throughput_median"] *= 2          # changed after doctor wrote it
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(b))
    out = cli("fleet", str(path))
    assert out.returncode == 2 and "sha256 does not match" in out.stderr
    assert cli("fleet", str(path), "--db", str(tmp_path / "x.db")).returncode == 2


# --- the rules ---------------------------------------------------------------------

def test_burn_in_summary_and_its_verdict():
    windows = [{"t": float(t), "tflops": 700.0 if t < 60 else 490.0, "copy_gbs": 900.0} for t in range(180)]
    samples = [{"t": float(t), "reasons": (0x4 if t >= 2 else 0) | (0x20 if t >= 75 else 0), "sm_clock_mhz": 1700,
                "power_w": 690.0, "temp_c": 80} for t in range(180)]
    s = burnin.summarise(windows, samples, 180.0)
    assert s["burst_tflops"] == 700 and s["sustained_tflops"] == 490 and s["sustained_to_burst"] == pytest.approx(0.7)
    assert s["first_throttle_s"] == 2 and s["throttle_first_seen_s"] == {"sw_power_cap": 2.0, "sw_thermal": 75.0}
    r = A.gpu({"burn_in": s}, tiny=False)
    assert r["slow"] == ["burn-in: sw_thermal from 75 s",
                         "burn-in: sustained 490 TFLOP/s is 0.70x the burst 700 (under 0.75)"]
    assert "power cap reached at 2 s" in r["notes"][0]
    # a power cap alone, sustained at the H200's healthy 0.88 of its burst: a healthy card under dense GEMMs
    calm = burnin.summarise([dict(w, tflops=700.0 if w["t"] < 60 else 616.0) for w in windows],
                            [dict(x, reasons=0x4) for x in samples], 180.0)
    assert A.gpu({"burn_in": calm}, tiny=False)["slow"] == []
    assert A.gpu({"burn_in": s}, tiny=True)["slow"] == ["burn-in: sw_thermal from 75 s"]   # no ratio on tiny sizes


TOPO = """        GPU0    GPU1    GPU2    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      NV18    PIX     SYS     0-55    0               N/A
GPU1    NV18     X      PIX     SYS     0-55    0               N/A
GPU2    PIX     PIX      X      SYS     0-55    0               N/A
"""


def test_each_pair_against_its_link():
    fp = {"topology": TOPO, "gpus": [{"index": i, "nvlink_gbs_per_direction": 478.1, "nvlink_links_active": 18,
                                      "pcie_gen_max": 5, "pcie_width_max": 16} for i in range(3)]}
    pairs = [{"src": 0, "dst": 1, "gbs": 390.0, "peer_access": True}, {"src": 1, "dst": 0, "gbs": 385.0,
                                                                       "peer_access": True},
             {"src": 0, "dst": 2, "gbs": 52.0, "peer_access": True}, {"src": 2, "dst": 0, "gbs": 26.0,
                                                                       "peer_access": True}]
    v = {x["pair"]: x for x in A.links({"pairs": pairs}, fp)}
    assert [v[p]["verdict"] for p in ("cuda:0->cuda:1", "cuda:1->cuda:0", "cuda:0->cuda:2")] == ["OK"] * 3
    assert v["cuda:0->cuda:1"]["expected_gbs"] == pytest.approx(478.1) and v["cuda:0->cuda:2"]["expected_gbs"] == 63
    assert v["cuda:2->cuda:0"]["verdict"] == "SLOW" and "0.41x the link's 63 GB/s" in v["cuda:2->cuda:0"]["why"][0]


def test_error_counters_that_grew_are_wrong_or_worth_a_look():
    before = {"available": True, "ecc_uncorrected": 0, "ecc_corrected": 5, "rows_remapped_uncorrected": 0,
              "row_remap_pending": False, "row_remap_failed": False}
    after = dict(before, ecc_uncorrected=1, ecc_corrected=9, row_remap_pending=True)
    changes = H.changes(before, after)
    assert changes == {"ecc_uncorrected": 1, "ecc_corrected": 4, "row_remap_pending": True}
    r = A.gpu({"counters_before": before, "counter_changes": changes, "xid": [79]}, tiny=False)
    assert r["wrong"] == ["XID event(s) during the checks: 79", "uncorrectable ECC errors during the checks (+1)"]
    assert r["check"] == ["correctable ECC errors during the checks (+4)",
                          "a row remap pending (reset to apply) during the checks (now)"]
    absent = A.gpu({"counters_before": H.counters("cpu")}, tiny=True)     # a CPU: said, not failed
    assert absent["notes"] == [H.NO_NVML] and not absent["wrong"] and not absent["fail"]


def test_a_healthy_h200_doctor_run_reads_ok_in_units_people_read():
    """The shipped H200 doctor run (docs/data/h200-s6-doctor-2026-12-01.json) alone: matmuls in TFLOP/s
    against the catalog, and the ResNet-50 step's published figure (batch 2,560) marked as context."""
    b = B.read(os.path.join(ROOT, "docs", "data", "h200-s6-doctor-2026-12-01.json"))
    fps = {e.id: e.fingerprint for e in b.environments}
    v = D.verdicts(b.results, b.results, fps[b.results[0].env_id], fps.get)
    (gpu,) = v.gpus
    assert gpu.verdict == "OK" and D.exit_code(v) == 0
    checks = {c.check: c for c in gpu.checks}
    bf16 = checks["matmul bf16"]
    assert bf16.unit == "TFLOP/s" and 600 < bf16.value < 800 and bf16.basis == "catalog"
    resnet = checks["resnet50-train amp-bf16+channels-last"]
    assert resnet.basis == "published" and 0.8 < resnet.vs_expected < 0.9 and not resnet.below
    assert resnet.basis_note.startswith("context: published at batch 2,560") and "batch 64" in resnet.basis_note
