"""SD v1.5 pipeline at tiny size: runner + database, FLOPs, and the max-batch search."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from gpuarena.workloads.sd15 import run as sd15
from gpuarena.workloads.base import StepContext
from tests.workloads.conftest import assert_ok, run_entries

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make(variant: str = "seed", size: str = "tiny", **given) -> sd15.SD15Generate:
    cls = sd15.SD15Generate
    p = cls.resolve_params(given, size=size)
    return cls(StepContext(device=torch.device("cpu"), variants=cls.parse_variant(variant), params=p))


def test_sd15_search_through_runner(db_path):
    # Everything fits at tiny size, so the search runs up to its cap and times that batch.
    (r,) = run_entries(db_path, [{"workload": "sd15-generate", "variants": ["fused-qkv"],
                                  "params": {"search": "max-batch", "search_max": 3, "output_type": "pt"}}],
                       repeats=1)
    assert_ok(r)
    e = r.extra
    assert r.unit == "images/s" and r.precision == "fp32"  # fp16 only on CUDA
    assert e.max_batch == 3 and e.capped is True and e.batch == 3
    assert [t["batch"] for t in e.tries] == [1, 2, 3] and all(t["fits"] for t in e.tries)
    assert r.items_per_step == 3
    assert e.attn_processors == ["FusedAttnProcessor2_0"]
    assert e.unet_calls_per_image == 3  # PNDM skip_prk: steps + 1


def test_flops_formula_matches_flop_counter():
    wl = make("eager-attn", output_type="pt")  # explicit attention: the counter sees every matmul
    wl.setup()
    wl.pipe.text_encoder.set_attn_implementation("eager")  # CPU sdpa is invisible to the counter
    with FlopCounterMode(display=False) as fc:
        wl.step()
    assert fc.get_total_flops() == pytest.approx(wl.flops_per_item() * wl.items_per_step(), rel=1e-9)


def test_v15_constants_are_the_counted_flops():
    # The stored constants (used without diffusers) equal a fresh count on the meta device.
    from gpuarena.workloads.sd15 import arch

    unet, vae, text = arch.count_component_flops("v1.5", 512)
    assert (unet, vae, text) == (arch.V15_UNET_FWD_512, arch.V15_VAE_DEC_512, arch.V15_TEXT_ENC)
    full = make(size="full")  # no setup: analysis prices claims from params alone
    assert full.flops_per_item() == pytest.approx(51 * 2 * unet + vae + 2 * text)
    assert full.flops_per_item() == pytest.approx(84.5e12, rel=0.01)
    assert make(size="full", guidance=1.0).flops_per_item() == pytest.approx(51 * unet + vae + text)


@pytest.mark.parametrize("limit", range(0, 40))
def test_find_max_returns_the_limit(limit):
    calls = []

    def fits(b):
        calls.append(b)
        return b <= limit

    best, tries, capped = sd15.find_max(fits, cap=33)
    assert best == min(limit, 33) and capped == (limit >= 33)
    assert [t["batch"] for t in tries] == calls and len(calls) <= 2 * 6 + 1  # log2 doubling + bisection


CAPPED_SEARCH = """
import json, resource, torch
from gpuarena.workloads.sd15.run import SD15Generate
from gpuarena.workloads.base import StepContext
p = SD15Generate.resolve_params({"image_size": 256, "search": "max-batch", "search_max": 64,
                                 "search_steps": 1, "output_type": "pt"}, size="tiny")
wl = SD15Generate(StepContext(device=torch.device("cpu"), variants=frozenset({"seed"}), params=dict(p, search="none")))
wl.setup()
wl.generate(1, 1)
peak = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmPeak")][0] * 1024
cap = peak + 120 * 2**20  # a real address-space limit: about two more 256 px images
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
wl.p = p
wl.search()
print(json.dumps(wl.search_info))
"""


def test_max_batch_search_under_a_real_memory_cap():
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.path.join(ROOT, "src"))
    out = subprocess.run([sys.executable, "-c", CAPPED_SEARCH], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    info = json.loads(out.stdout.strip().splitlines()[-1])
    best = info["max_batch"]
    assert 1 <= best < 64 and info["capped"] is False
    fits = {t["batch"]: t["fits"] for t in info["tries"]}
    assert fits[best] is True and fits[best + 1] is False  # the answer sits right under an OOM
    assert all(ok == (b <= best) for b, ok in fits.items())
