"""compare's summary counts each result once, and never a diverged one (qa14b): over the shipped bundles."""

from __future__ import annotations

import math

from gpuarena.analysis.verbs import compare as C


def test_each_result_counts_once_and_no_diverged_run_counts(everything):
    # against the A100 80GB SXM4, the H200's SD result meets two published A100 rows (SDPA and xformers)
    out = C.compare(everything, "A100 80GB SXM4")
    h200 = [r for r in out.rows if r.gpu == "NVIDIA H200 SXM 141GB" and not r.diverged]
    ids = {r.result_id for r in h200}
    assert len(ids) < len(h200)                    # one result met two baseline rows
    (s,) = [x for x in out.summary if x.gpu == "NVIDIA H200 SXM 141GB"]
    per = [math.prod(r.ratio for r in h200 if r.result_id == i) ** (1 / sum(r.result_id == i for r in h200))
           for i in ids]
    assert s.n == len(ids) and math.isclose(s.geomean_ratio, math.prod(per) ** (1 / len(per)))
    # against the A100 40GB SXM4: the H200's ResNet-50 runs that trained into NaNs are left out, and said
    (s,) = [x for x in C.compare(everything, "A100 40GB SXM4").summary if x.gpu == "NVIDIA H200 SXM 141GB"]
    assert s.diverged_left_out > 0 and s.n == len(
        {r.result_id for r in C.compare(everything, "A100 40GB SXM4").rows
         if r.gpu == "NVIDIA H200 SXM 141GB" and not r.diverged})
