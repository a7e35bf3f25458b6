"""llm-serve's ``fp8-weights`` (weight_only.Fp8Linear, version 6) on the CPU: e4m3 weights with one
scale per output channel, read weight-only by a compiled one-row decode and through
``torch._scaled_mm`` with per-row activation scales otherwise; a tiny model decodes the first
tokens of the FP32 one, and the rung runs through the real runner."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

from gpuarena.workloads.llm import weight_only
from tests.workloads.conftest import assert_ok, run_entries
from tests.workloads.test_llm_engine import greedy, prompt, tiny_model


def fp8_linear(seed: int = 0, n_in: int = 64, n_out: int = 48):
    torch.manual_seed(seed)
    lin = torch.nn.Linear(n_in, n_out, bias=False)
    return lin, weight_only.Fp8Linear(lin)


def test_weights_within_an_e4m3_rounding_step():
    lin, q = fp8_linear()
    w = lin.weight.detach()
    assert q.weight.dtype == torch.float8_e4m3fn and q.weight.shape == w.shape
    assert q.scales.shape == (1, w.shape[0]) and q.scales.dtype == torch.float32
    back = q.weight.float() * q.scales.t()
    # e4m3 keeps 3 mantissa bits: a normal value is within 2^-4 of itself; the row's largest
    # magnitude maps to 448 exactly, so its scale is the row's max over 448
    assert (back - w).abs().max() <= (w.abs() * 2**-4).max()
    assert torch.allclose(q.scales.flatten(), w.abs().amax(dim=1) / weight_only.E4M3_MAX)


def test_two_paths_one_product():
    """Eager (any row count) runs the FP8 GEMM with the rows scaled when they arrive; one row under
    torch.compile is the weight-only product.  Both are the FP32 product within FP8's rounding."""
    lin, q = fp8_linear(1)
    x = torch.randn(3, 64)
    ref = lin(x).detach()
    xq, xs = weight_only.per_row_fp8(x)
    gemm = torch._scaled_mm(xq, q.weight.t(), scale_a=xs, scale_b=q.scales, out_dtype=torch.float32)
    assert torch.equal(q(x), gemm)
    assert (q(x) - ref).norm() / ref.norm() < 0.08
    one = x[:1]
    weight_only_ref = F.linear(one, q.weight.float()) * q.scales
    compiled = torch.compile(q, fullgraph=True)
    assert torch.allclose(compiled(one), weight_only_ref, rtol=1e-5, atol=1e-5)
    # the one-row compiled path does not quantise the activation: closer to FP32 than the GEMM's row
    assert (compiled(one) - ref[:1]).norm() <= (gemm[:1] - ref[:1]).norm() + 1e-6
    assert torch.allclose(compiled(x), gemm, rtol=1e-4, atol=1e-4)      # more rows: the FP8 GEMM


def test_fp8_weights_decode_the_same_first_tokens():
    plain = tiny_model()
    q = copy.deepcopy(plain)
    desc = weight_only.quantize(q, "fp8")
    assert desc.startswith("FP8 e4m3 weights") and "left" not in desc
    assert isinstance(q.output, weight_only.Fp8Linear)
    assert isinstance(q.layers[0].feed_forward.w2, weight_only.Fp8Linear)
    x = prompt()
    (lp, tp), (lq, tq) = greedy(plain, x, 4), greedy(q, x, 4)
    # e4m3 rounds both the weights and (batch 2: the FP8 GEMM) the activations to 3 mantissa bits;
    # the tiny random model's third token is a near tie (int4's test keeps two tokens too)
    assert torch.equal(tp[:, :2], tq[:, :2])
    assert (lq - lp).norm() / lp.norm() < 0.1


def test_a_layer_the_fp8_gemm_cannot_take_stays():
    model = torch.nn.Sequential(torch.nn.Linear(64, 48, bias=False), torch.nn.Linear(48, 30, bias=False))
    desc = weight_only.quantize(model, "fp8")
    assert isinstance(model[0], weight_only.Fp8Linear) and type(model[1]) is torch.nn.Linear
    assert desc.endswith("1 linear layer(s) left in their dtype (dimensions not multiples of 16)")


def test_fp8_weights_through_runner(db_path):
    rs = run_entries(db_path, [{"workload": "llm-serve", "variants": ["static-cache", "compile+fp8-weights"],
                                "params": {"batch_size": 1}}], repeats=1)
    plain, fp8 = rs
    for r in rs:
        assert_ok(r)
    assert fp8.extra.quantization.startswith("FP8 e4m3 weights") and plain.extra.quantization is None
    # one byte a weight (plus a float32 scale a channel) against four: the FP32 embedding stays
    assert fp8.extra.weights_bytes < 0.6 * plain.extra.weights_bytes
    assert fp8.extra.decode_tokens_per_s > 0


@pytest.mark.gpu
def test_fp8_weights_on_the_gpu_one_row_and_many():
    lin = torch.nn.Linear(4096, 4096, bias=False, device="cuda", dtype=torch.bfloat16)
    for q in (weight_only.Fp8Linear(lin), weight_only.Fp8Linear(lin, rowwise=False)):
        for rows in (1, 64):
            x = torch.randn(rows, 4096, device="cuda", dtype=torch.bfloat16)
            ref = lin(x).float()
            for f in (q, torch.compile(q)):
                assert (f(x).float() - ref).norm() / ref.norm() < 0.08


def test_one_scale_a_tensor_where_the_gemm_has_no_row_scales():
    """Where this PyTorch's FP8 GEMM takes one scale a tensor only (Ada before torch 2.7, some
    Blackwell builds), the row and channel scales go on its FP32 output: the same product."""
    from gpuarena.workloads.llm import fp8

    lin, rows = fp8_linear(2)
    tensor = weight_only.Fp8Linear(lin, rowwise=False)
    assert torch.equal(tensor.weight.float(), rows.weight.float()) and not tensor.rowwise
    x = torch.randn(5, 64)
    assert torch.allclose(tensor(x), rows(x), rtol=1e-5, atol=1e-5)
    # this CPU's PyTorch takes either; the probe says why where one fails
    assert fp8.scaled_mm_works(torch.device("cpu"), rowwise=True) is None
    assert fp8.scaled_mm_works(torch.device("cpu"), rowwise=False) is None
    model = torch.nn.Sequential(torch.nn.Linear(64, 48, bias=False))
    assert "one scale a tensor" not in weight_only.quantize(model, "fp8") and model[0].rowwise
