"""llm-serve's ``gemv`` variant (llm/gemv.py, versions 8 and 9): gpuarena's Triton matrix-vector kernel for a
compiled decode's one-row products.  The kernel itself runs on the CPU under Triton's interpreter
(``TRITON_INTERPRET=1``, a fresh interpreter: the variable is read when a kernel is defined); the
layer wrapper, the plan-time rules and the rung through the real runner run as they are."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from gpuarena.errors import UserError
from gpuarena.workloads.llm import engine, gemv, weight_only
from gpuarena.workloads.llm.engine_facts import GEMV_DESCRIPTION
from gpuarena.workloads.llm.serve import LLMServe
from tests.workloads.conftest import assert_ok, run_entries
from tests.workloads.test_llm_engine import TINY, greedy, tiny_model

INTERPRETED = r"""
import json, torch
from gpuarena.workloads.llm import gemv
from gpuarena.workloads.llm.weight_only import per_row_fp8
torch.manual_seed(0)
out = {}
for n, k, cfg in ((37, 80, (4, 32, 4, 1)), (48, 96, None), (16, 2048, (8, 1024, 4, 1))):
    base = torch.randn(n, k)
    cases = {"float32": (base, None), "bfloat16": (base.bfloat16(), None),
             "float8_e4m3fn": (lambda q, s: (q, s.reshape(-1)))(*per_row_fp8(base)),
             "int8": ((base * 40).round().clamp(-127, 127).to(torch.int8), torch.rand(n) + 0.5)}
    for name, (w, s) in cases.items():
        x = torch.randn(k).to(torch.bfloat16 if name != "float32" else torch.float32)
        y = torch.empty(n, dtype=x.dtype)
        gemv.launch(x, w, s, y, cfg)
        ref = gemv.reference(x, w, s).float()
        out[f"{n}x{k} {name}"] = ((y.float() - ref).norm() / ref.norm()).item()
        g = (torch.rand(k) + 0.5).to(x.dtype)      # the RMSNorm folded in (version 9)
        gemv.launch(x * 3, w, s, y, cfg, norm_weight=g, eps=1e-5)
        ref = gemv.reference(x * 3, w, s, g, 1e-5).float()
        out[f"{n}x{k} {name} normed"] = ((y.float() - ref).norm() / ref.norm()).item()
try:
    gemv.launch(torch.randn(32), torch.randn(32, 16).t(), None, torch.empty(16))
except ValueError as e:
    out["strided"] = str(e)
print(json.dumps(out))
"""


def test_the_kernel_is_the_reference_product():
    """Rows and inputs that the tiles do not divide (37 x 80 in tiles of 4 x 32), the default tiles,
    and the H200's FP8 tiles; weights in FP32, bf16, FP8 and int8 with a scale a row."""
    pytest.importorskip("triton")       # PyTorch's Linux wheels bring it; elsewhere the op is the reference
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", INTERPRETED], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    errors = json.loads(done.stdout.strip().splitlines()[-1])
    assert "strided" in errors.pop("strided")        # a transposed weight is refused, not misread
    assert len(errors) == 24
    for case, err in errors.items():
        # the kernel sums in FP32 as the reference does; bf16 outputs round to 8 bits of mantissa (and the
        # reference rounds the normalised row to bf16 before its product, the kernel does not)
        assert err < (1e-5 if "float32" in case else 8e-3), (case, err)


def test_the_op_on_a_cpu_is_the_reference_formula():
    torch.manual_seed(0)
    w, s = weight_only.per_row_fp8(torch.randn(24, 40))
    x = torch.randn(1, 1, 40)
    want = torch.nn.functional.linear(x, w.float()) * s.reshape(1, 1, -1)
    op = torch.ops.gpuarena.matvec(x, w, s.reshape(-1))
    assert op.shape == (24,) and torch.allclose(op, want.reshape(-1), atol=1e-5)
    got = gemv.matvec(x, w, s.reshape(-1))
    assert got.shape == (1, 1, 24) and torch.allclose(got, want, atol=1e-5)
    compiled = torch.compile(lambda a: gemv.matvec(a, w, s.reshape(-1)) * 2, fullgraph=True)
    assert torch.allclose(compiled(x), 2 * want, atol=1e-5)


@pytest.mark.parametrize("n, itemsize, tiles", [(6144, 2, (2, 1024, 1)), (4096, 2, (1, 1024, 3)),
                                                (4096, 1, (8, 1024, 1)), (6144, 1, (8, 1024, 1))])
def test_tiles_divide_the_input(n, itemsize, tiles):
    for k in (4096, 14336, 80, 4104):     # 4104: no power of two from 16 divides it; the kernel masks
        bn, bk, warps, stages = gemv.config(n, k, itemsize)
        assert (bn, warps, stages) == (tiles[0], 4, tiles[2]) and bk <= tiles[1] and (k % bk == 0 or bk == 16)


def test_use_wraps_the_narrow_plain_layers_only():
    wide = torch.nn.Linear(64, gemv.NARROW + 16, bias=False)
    packed = weight_only.Int4WeightOnlyLinear(torch.nn.Linear(64, 64, bias=False), 32, 2)
    model = torch.nn.Sequential(torch.nn.Linear(64, 48, bias=False), torch.nn.Embedding(10, 64), packed, wide,
                                weight_only.Int8WeightOnlyLinear(torch.nn.Linear(48, 32, bias=False)))
    assert gemv.use(model) == 2 and gemv.use(model) == 0          # once, and never twice
    assert isinstance(model[0], gemv.OneRowLinear) and isinstance(model[4], gemv.OneRowLinear)
    # the embedding, int4's packed weight and a matrix wider than NARROW stay as they are
    assert type(model[1]) is torch.nn.Embedding and model[2] is packed and model[3] is wide
    strided = torch.nn.Linear(64, 32, bias=False)
    strided.weight = torch.nn.Parameter(torch.randn(64, 32).t())      # a transposed view: not row-major
    assert gemv.use(torch.nn.Sequential(strided)) == 0
    tiny = engine.fuse_projections(tiny_model())
    weight_only.quantize(tiny, "fp8")
    n_linear = sum(isinstance(m, weight_only.Fp8Linear) for m in tiny.modules())
    assert gemv.use(tiny) == n_linear       # the tiny model's every matrix is narrow, the head too
    ff = tiny.layers[0].feed_forward
    assert isinstance(ff.w2, gemv.OneRowLinear) and isinstance(ff.w2.inner, weight_only.Fp8Linear)
    x = torch.randn(3, 1, ff.w2.in_features)
    assert torch.equal(ff.w2(x), ff.w2.inner(x))       # off a GPU the layer's own product


def test_the_folded_norm_decodes_the_unfolded_tokens():
    """Version 9: the QKV projection's RMSNorm folded into the one-row product (``fold_norms``).  The
    compiled one-row step of the folded model gives the plain model's logits and tokens; the norm passes
    its one row through only under compile, and normalises any other input itself."""
    plain = engine.fuse_projections(tiny_model())
    folded = engine.fuse_projections(tiny_model())
    assert gemv.use(folded) > 0 and gemv.fold_norms(folded) == 0      # use folds them, once
    blk = folded.layers[0]
    assert isinstance(blk.attention_norm, gemv.FoldedNorm) and blk.attention.wqkv.fold == (blk.attention_norm.norm,)
    assert sum(p.numel() for p in folded.parameters()) == sum(p.numel() for p in plain.parameters())
    row = torch.randn(1, 1, blk.attention.wqkv.in_features)
    assert torch.equal(torch.compile(blk.attention_norm, fullgraph=True)(row), row)
    assert torch.equal(blk.attention_norm(row), blk.attention_norm.norm(row))       # eager: normalised here
    x = torch.randint(0, TINY.vocab_size, (1, 9), generator=torch.Generator().manual_seed(3))
    step = torch.compile(lambda tok, pos, cache: folded(tok, cache, pos), fullgraph=True)
    (l1, t1), (l2, t2) = greedy(plain, x, 5), greedy(folded, x, 5, step=step)
    assert torch.equal(t1, t2) and torch.allclose(l1, l2, rtol=1e-4, atol=1e-5)


def test_gemv_is_planned_with_compile_only():
    assert LLMServe.parse_variant("compile+fused-proj+gemv") == {"compile", "fused-proj", "gemv"}
    assert "gemv" in LLMServe.parse_variant("compile+fp8-weights+gemv")
    with pytest.raises(UserError, match="add compile"):
        LLMServe.parse_variant("fused-proj+gemv")
    with pytest.raises(UserError, match="exclude each other"):
        LLMServe.parse_variant("compile+gemv+int4-weights")


def test_gemv_through_runner(db_path):
    rs = run_entries(db_path, [{"workload": "llm-serve", "variants": ["compile+fused-proj+gemv",
                                                                      "compile+fused-proj+int8-weights+gemv"],
                                "params": {"batch_size": 1}}], repeats=1)
    for r in rs:
        assert_ok(r)
        assert r.extra.matvec.endswith(GEMV_DESCRIPTION) and int(r.extra.matvec.split()[0]) > 0
        assert r.extra.decode_tokens_per_s > 0
    assert rs[1].extra.quantization.startswith("int8")


@pytest.mark.gpu
def test_the_kernel_on_the_gpu_at_llama3_shapes():
    torch.manual_seed(0)
    for n, k in ((6144, 4096), (4096, 14336)):
        base = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
        q, s = weight_only.per_row_fp8(base)
        x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
        for w, sc in ((base, None), (q, s.reshape(-1))):
            ref = gemv.reference(x, w, sc).float()
            for f in (gemv.matvec, torch.compile(gemv.matvec, fullgraph=True)):
                got = f(x, w, sc).float().reshape(-1)
                assert (got - ref).norm() / ref.norm() < 8e-3
    # the one-row feed-forward block realises its SwiGLU product (engine.FusedFeedForward): the same output
    ff = engine.fuse_projections(tiny_model().to("cuda", torch.bfloat16)).layers[0].feed_forward
    x = torch.randn(1, 1, ff.w13.in_features, device="cuda", dtype=torch.bfloat16)
    assert torch.allclose(torch.compile(ff)(x), ff(x), rtol=2e-2, atol=2e-3)
