"""Doctor's acceptance checks on a CUDA GPU (skipped without one): the exact-reference GEMM check finds
no mismatch on a healthy card at full size in every dtype, and one changed element is found; the
memory test reads back what it wrote; the error counters are read; a short burn-in samples NVML."""

from __future__ import annotations

import pytest
import torch

from gpuarena.measure import health as H
from gpuarena.runner import burnin, gemm_check, memtest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", list(gemm_check.DTYPES))
def test_every_gemm_result_matches_the_exact_reference(dtype):
    r = gemm_check.check("cuda:0", dtype, 8192, 3)
    assert r["reference_ok"] and r["results"] == 3 and r["bad_results"] == 0 and r["bad_elements"] == 0


def test_one_changed_element_is_found(monkeypatch):
    real = torch.matmul

    def corrupt(a, b):
        out = real(a, b)
        out[17, 4] += 64            # an integer result off by 64: representable in every output dtype
        return out

    monkeypatch.setattr(torch, "matmul", corrupt)
    r = gemm_check.check("cuda:0", "bf16", 1024, 2)
    assert r["bad_results"] == 2 and r["bad_elements"] == 2


def test_memory_test_and_counters_on_a_gpu():
    m = memtest.memtest("cuda:0", fraction=0.2)
    assert m["bad_words"] == 0 and m["bytes_tested"] > 0 and m["free_bytes"] > m["bytes_tested"]
    c = H.counters(torch.device("cuda:0"))
    assert c["available"] and {"ecc_uncorrected", "rows_remapped_uncorrected", "row_remap_failed"} <= set(c)


def test_a_short_burn_in_samples_nvml():
    out = burnin.burn(["cuda:0"], 5.0)["cuda:0"]
    assert "error" not in out, out.get("error")
    assert out["burst_tflops"] > 0 and out["sustained_tflops"] > 0 and out["correctness"]["bad_results"] == 0
    assert "throttle_first_seen_s" in out and out["series"] and out.get("sustained_power_w", 0) > 0
