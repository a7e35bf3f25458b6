"""The serving engine's recipe (llm/engine.py) on a tiny model on the CPU: fused projections,
the compiled prefill, weight-only int8, and llm-serve's new variants through the real runner."""

from __future__ import annotations

import copy
import os

import pytest
import torch

from gpuarena.workloads.llm import engine, weight_only
from gpuarena.workloads.llm import model as M
from gpuarena.workloads.llm.cache import StaticCache
from gpuarena.workloads.llm.shapes import SHAPES
from tests.workloads.conftest import assert_ok, run_entries

TINY = SHAPES["tiny"]


def tiny_model(seed: int = 0) -> M.Llama:
    torch.manual_seed(seed)
    return M.build(TINY, "cpu").eval()


@torch.inference_mode()
def greedy(model, prompt, steps: int, prefill=None, step=None, cache_len: int = 32):
    """Prefill then ``steps`` greedy decode steps over a static cache; the prefill's last logits
    and the tokens."""
    cache = StaticCache(TINY, prompt.shape[0], cache_len, "cpu", torch.float32)   # one size: as in a serving case

    def eager(tokens, c):
        logits = model(tokens, c, last_only=True)
        return logits, logits[:, -1].argmax(-1, keepdim=True)

    logits, tok = (prefill or eager)(prompt, cache)
    toks = [tok]
    for i in range(steps):
        pos = torch.tensor([prompt.shape[1] + i])
        logits_t = step(tok, pos, cache) if step else model(tok, cache, pos)
        tok = logits_t[:, -1].argmax(-1, keepdim=True)
        toks.append(tok)
    return logits, torch.cat(toks, dim=1)


def prompt(batch=2, length=12, seed=1):
    return torch.randint(0, TINY.vocab_size, (batch, length), generator=torch.Generator().manual_seed(seed))


def test_fused_projections_match_the_unfused_model():
    plain = tiny_model()
    fused = engine.fuse_projections(copy.deepcopy(plain))
    blk = fused.layers[0]
    assert isinstance(blk.attention, engine.FusedAttention) and not hasattr(blk.attention, "wq")
    kv = TINY.n_kv_heads * TINY.head_dim
    assert blk.attention.wqkv.weight.shape == (TINY.dim + 2 * kv, TINY.dim)
    assert blk.feed_forward.w13.weight.shape == (2 * TINY.ffn_dim, TINY.dim)
    # the same parameters, rearranged: the count is unchanged
    assert sum(p.numel() for p in fused.parameters()) == sum(p.numel() for p in plain.parameters())
    x = prompt()
    with torch.inference_mode():
        want, got = plain(x), fused(x)
    assert (got - want).norm() / want.norm() < 1e-5
    # and through the cache: prefill then decode give the same tokens
    (l1, t1), (l2, t2) = greedy(plain, x, 6), greedy(fused, x, 6)
    assert torch.equal(t1, t2) and torch.allclose(l1, l2, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("graphs", [False, True])
def test_compiled_prefill_gives_eager_tokens_and_one_graph_for_two_lengths(graphs):
    """Also with ``graphs`` (llm-serve's ``prefill=graph``: reduce-overhead, the outputs cloned out of the
    graph pool); on a CPU inductor records no CUDA graph, so this checks the compiled graph and the copies."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    model = engine.fuse_projections(tiny_model())

    def fn(tokens, cache):
        logits = model(tokens, cache, last_only=True)
        return logits, logits[:, -1].argmax(-1, keepdim=True)

    compiled = engine.compile_prefill(fn, graphs=graphs)
    before = counters["stats"]["unique_graphs"]
    for length in (12, 17):
        x = prompt(length=length, seed=length)
        (le, te), (lc, tc) = greedy(model, x, 3), greedy(model, x, 3, prefill=compiled)
        assert torch.equal(te, tc)
        assert torch.allclose(le, lc, rtol=1e-4, atol=1e-4)
    # the second prompt length reused the first graph (its length is a symbol)
    assert counters["stats"]["unique_graphs"] - before == 1


def test_int8_weights_decode_the_same_first_tokens():
    plain = tiny_model()
    q = copy.deepcopy(plain)
    desc = weight_only.quantize(q, "int8")
    assert "int8" in desc
    lin = q.layers[0].attention.wq
    assert isinstance(lin, weight_only.Int8WeightOnlyLinear) and lin.weight.dtype == torch.int8
    assert isinstance(q.output, weight_only.Int8WeightOnlyLinear)
    # one byte a weight plus one scale per output channel
    w = plain.layers[0].attention.wq.weight
    assert lin.scales.shape == (w.shape[0],)
    assert (lin.weight.float() * lin.scales[:, None] - w).abs().max() <= lin.scales.max() / 2 + 1e-7
    x = prompt()
    (lp, tp), (lq, tq) = greedy(plain, x, 4), greedy(q, x, 4)
    assert torch.equal(tp[:, :3], tq[:, :3])
    assert (lq - lp).norm() / lp.norm() < 0.05


def test_int8_composes_with_fused_projections():
    fused = engine.fuse_projections(tiny_model())
    weight_only.quantize(fused, "int8")
    assert isinstance(fused.layers[0].attention.wqkv, weight_only.Int8WeightOnlyLinear)
    assert isinstance(fused.layers[0].feed_forward.w13, weight_only.Int8WeightOnlyLinear)


def test_realised_input_is_the_input_eager_and_compiled():
    """int8's input is written by a kernel of its own under compile on a GPU; the value is unchanged.
    On the CPU (no matrix-vector decomposition to keep apart) it is the input itself."""
    x = torch.randn(3, 5)
    assert weight_only.realised(x) is x
    f = torch.compile(lambda a: weight_only.realised(torch.nn.functional.silu(a)) * 2, fullgraph=True)
    assert torch.allclose(f(x), torch.nn.functional.silu(x) * 2)


def test_int4_weights_decode_the_same_first_tokens():
    plain = tiny_model()
    q = engine.fuse_projections(copy.deepcopy(plain))
    desc = weight_only.quantize(q, "int4")
    assert desc.startswith("int4 weight-only, groups of") and "left" not in desc
    lin = q.layers[0].feed_forward.w13
    assert isinstance(lin, weight_only.Int4WeightOnlyLinear) and isinstance(q.output, weight_only.Int4WeightOnlyLinear)
    # half a byte a weight, and a scale and a zero per group of the input dimension
    w = torch.cat([plain.layers[0].feed_forward.w1.weight, plain.layers[0].feed_forward.w3.weight])
    assert lin.weight.numel() * lin.weight.element_size() == w.numel() // 2
    assert lin.scales_and_zeros.shape == (w.shape[1] // lin.group, w.shape[0], 2)
    # each weight within half a step of its group's 16 levels
    step = (lin.scales_and_zeros[..., 0].t().repeat_interleave(lin.group, dim=1))
    dequantized = lin(torch.eye(lin.in_features)).t()     # the weight tinygemm multiplies by: [out, in]
    assert ((dequantized - w).abs() <= step / 2 + 1e-6).all()
    x = prompt()
    (lp, tp), (lq, tq) = greedy(plain, x, 4), greedy(q, x, 4)
    assert torch.equal(tp[:, :2], tq[:, :2])
    # 16 levels over a group's range: about 9% of a random weight's spread a weight, so ~10% on the logits
    assert (lq - lp).norm() / lp.norm() < 0.2


def test_int4_layout_rules():
    assert weight_only.int4_layout(4096, 14336) == (128, 8)
    assert weight_only.int4_layout(14336, 4096) == (128, 8)
    assert weight_only.int4_layout(64, 32) == (64, 4)
    assert weight_only.int4_layout(64, 30) is None      # out_features not a multiple of 8
    assert weight_only.int4_layout(40, 64) is None      # no group size divides 40


def test_reduction_decode_attention_matches_sdpa():
    g = torch.Generator().manual_seed(3)
    b, h, kvh, L, d = 3, 8, 2, 20, 16
    q = torch.randn(b, h, 1, d, generator=g)
    k, v = torch.randn(b, kvh, L, d, generator=g), torch.randn(b, kvh, L, d, generator=g)
    mask = (torch.arange(L)[None, :] <= torch.tensor([13])[:, None])[None, None]   # 14 live positions
    want = M._sdpa_gqa(q, k, v, is_causal=False, mask=mask)
    got = engine.reduction_decode_attention(q, k, v, mask)
    assert got.shape == want.shape and (got - want).norm() / want.norm() < 1e-5
    # the masked positions are not read: changing them changes nothing
    k2 = k.clone()
    k2[:, :, 14:] = 1e4
    assert torch.equal(engine.reduction_decode_attention(q, k2, v, mask), got)
    plain = tiny_model()
    swapped = copy.deepcopy(plain)
    engine.use_decode_attention(swapped, "reduction", 32, "cpu")
    x = prompt()
    (_l1, t1), (_l2, t2) = greedy(plain, x, 6), greedy(swapped, x, 6)
    assert torch.equal(t1, t2)


def test_flex_decode_attention_gives_sdpa_tokens_eager_and_compiled():
    from torch._dynamo.utils import counters

    plain = tiny_model()
    flex = copy.deepcopy(plain)
    engine.use_decode_attention(flex, "flex", 32, "cpu")
    attend = flex.layers[0].attention.decode_attend
    assert isinstance(attend, engine.FlexDecodeAttention)
    # one token over a cache with 14 live positions: SDPA's output, and the dead positions unread
    g = torch.Generator().manual_seed(5)
    q = torch.randn(2, 8, 1, 16, generator=g)
    k, v = torch.randn(2, 2, 32, 16, generator=g), torch.randn(2, 2, 32, 16, generator=g)
    pos = torch.tensor([13])
    mask = (torch.arange(32)[None, :] <= pos[:, None])[None, None]
    want = M._sdpa_gqa(q, k, v, is_causal=False, mask=mask)
    got = attend(q, k, v, mask, pos)
    assert (got - want).norm() / want.norm() < 1e-5
    k[:, :, 14:] = 1e4
    assert torch.allclose(attend(q, k, v, mask, pos), got, atol=1e-6)
    x = prompt()
    (_l1, t1), (_l2, t2) = greedy(plain, x, 6), greedy(flex, x, 6)
    assert torch.equal(t1, t2)
    # compiled whole, as llm-serve's decode step: SDPA's tokens, one graph for every position.  At the
    # shapes of llm-serve's tiny case (batch 1, a 16-token prompt, a 24-position cache), whose compiled
    # decode (test_llm_serve.py) has the same flex-decoding kernels: on a first run inductor builds
    # them once for both tests (12 CPU s less).  Batch 2 is checked above, eager.
    serving = copy.deepcopy(plain)
    engine.use_decode_attention(serving, "flex", 24, "cpu")
    x = prompt(batch=1, length=16)
    _l1, t1 = greedy(plain, x, 6, cache_len=24)
    torch._dynamo.reset()
    before = counters["stats"]["unique_graphs"]
    step = torch.compile(lambda tok, pos, cache: serving(tok, cache, pos), fullgraph=True)
    _l3, t3 = greedy(serving, x, 6, step=step, cache_len=24)
    assert torch.equal(t1, t3)
    assert counters["stats"]["unique_graphs"] - before == 1


def test_decode_profile_on_cpu_counts_steps():
    out = engine.decode_profile(lambda: 3)
    assert out["steps"] == 3 and out["kernels"] == []     # no device kernels on a CPU


def test_new_variants_through_runner(db_path):
    rs = run_entries(db_path, [{"workload": "llm-serve",
                                "variants": ["fused-proj", "int8-weights+fused-proj", "int4-weights+fused-proj"],
                                "params": {"batch_size": 2, "profile": 1, "decode_attention": "flex"}}],
                     repeats=1)
    fused, int8, int4 = rs
    for r in rs:
        assert_ok(r)
        assert r.extra.projections == "fused (wqkv, w13)"
        assert r.extra.decode_profile["steps"] == 7 and r.extra.decode_attention == "flex"
    assert fused.extra.quantization is None and "int8" in int8.extra.quantization
    # int8 weights: about a quarter of the fp32 bytes of every linear (the embedding stays fp32)
    assert int8.extra.weights_bytes < 0.6 * fused.extra.weights_bytes
    assert int8.precision == "fp32"     # the arithmetic: weights are dequantised on the CPU's fp32
    assert "int4" in int4.extra.quantization and int4.extra.weights_bytes < int8.extra.weights_bytes


def test_variant_rules():
    from gpuarena.errors import UserError
    from gpuarena.workloads.llm.serve import LLMServe

    with pytest.raises(UserError, match="exclude each other"):
        LLMServe.parse_variant("int8-weights+fp8-weights")
    with pytest.raises(UserError, match="exclude each other"):
        LLMServe.parse_variant("int8-weights+int4-weights")
    assert LLMServe.canonical_variant("fused-proj+compile") == "compile+fused-proj"


def test_quantised_weights_keep_the_prefill_eager_under_compile():
    """On the H200 the compiled dynamic-length prefill over int8 weights ran at 0.93 TFLOP/s (a 7.9 s
    TTFT, session 8): `prefill=auto` compiles it unless int8/int4 weights are upcast in it (FP8's runs
    on the FP8 tensor cores); a user can force either."""
    from gpuarena.workloads.llm.serve import LLMServe

    assert LLMServe.prefill_compiled("auto", upcast=False)
    assert not LLMServe.prefill_compiled("auto", upcast=True)
    assert LLMServe.prefill_compiled("compile", upcast=True)
    assert not LLMServe.prefill_compiled("eager", upcast=False)
    assert LLMServe.prefill_compiled("graph", upcast=True)     # compiled, and replayed as CUDA graphs
    assert weight_only.UPCAST_EVERY_ROW == {"int8-weights", "int4-weights"}
    assert LLMServe.resolve_params({"prefill": "auto"}, "tiny")["prefill"] == "auto"


@pytest.mark.parametrize("choice", ["graph", "compile"])
def test_a_compiled_prefill_without_the_compile_variant_is_refused_at_planning(tmp_path, choice):
    """``prefill=graph`` (or ``compile``) on an engine that compiles nothing ran eager and was stored as
    asked: a result named prefill=graph whose prefill was never compiled.  Refused before any case runs."""
    import sqlite3

    from gpuarena.errors import UserError
    from gpuarena.spec.model import Entry, Suite, expand
    from tests.conftest import gpuarena
    from tests.procs import one_line_error

    db = str(tmp_path / "g.db")
    p = gpuarena("run", "-w", "llm-serve", "-v", "static-cache", "--set", f"prefill={choice}", "-d", "cpu",
                 "-q", "--db", db)
    one_line_error(p, 2, f"prefill={choice}")
    assert not os.path.exists(db) or not sqlite3.connect(db).execute(
        "select name from sqlite_master where name='results'").fetchone() or not sqlite3.connect(db).execute(
        "select count(*) from results").fetchone()[0]
    suite = Suite(name="s", entries=[Entry(workload="llm-serve", variants=["seed", "compile"],
                                           params={"prefill": choice})])
    with pytest.raises(UserError, match="add compile"):
        expand(suite, "cpu")
    ok = Suite(name="s", entries=[Entry(workload="llm-serve", variants=["compile", "compile+fused-proj"],
                                        params={"prefill": choice})])
    assert [c.params["prefill"] for c in expand(ok, "cpu")] == [choice, choice]
    for fine in ("auto", "eager"):       # what an engine without compile does anyway
        expand(Suite(name="s", entries=[Entry(workload="llm-serve", variants=["seed"], params={"prefill": fine})]),
               "cpu")
