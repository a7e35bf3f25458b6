"""The LLM models held out against published figures (`advise --validate`): each published training run
and serving figure predicted from the evidence without it.

- **Training** (data/training_mfu.csv): each run's MFU as analysis/physics/llm_efficiency.py's ``efficiency``
  gives it from every other run (the rule `whatif`, `advise` and `check -w llm-train` use), so its
  tokens/s per GPU predicted = published x predicted MFU / its own MFU.  A run with no comparable
  evidence left (its generation, size and GPU count alone) is counted apart: the plan would ask for --mfu.
- **Serving** (data/serving_evidence.csv): each throughput row's share of its own physical bound
  (analysis/physics/serving_evidence.py) against the shares of the other rows of its weight precision: the
  projection at their median, and the ceiling check makes of them (the highest, widened by the spread
  between publications, or gpt-fast's and gpuarena's own where higher) must not reject the row.
"""

from __future__ import annotations

import statistics

from gpuarena.analysis.physics import llm_efficiency as LE
from gpuarena.analysis.physics import serving_evidence as SE
from gpuarena.analysis.physics import serving_model as M
from gpuarena.data import catalog
from gpuarena.data.training_evidence import training_runs
from gpuarena.errors import UserError

PUBLISHED_SPREAD = 0.08      # analysis/physics/limits.py: two publications of one figure


def training() -> tuple[list[dict], list[dict]]:
    """(rows predicted, runs left without comparable evidence)."""
    rows, apart = [], []
    published = LE.published_runs()
    for i, (src, run) in enumerate(zip(training_runs(), published)):
        others = published[:i] + published[i + 1:]
        g = catalog.match(src.gpu)
        what = f"{src.model} {src.precision} on {src.gpus or '?'} x {g.short}"
        try:
            e = LE.efficiency(src.model, g, src.gpus or 8, src.precision, runs=others)
        except UserError:
            apart.append({"what": what, "source": src.source})
            continue
        predicted = src.tokens_per_gpu_s * e.mfu / run.mfu
        rows.append({"path": "hold-out training", "workload": "llm-train", "precision": src.precision,
                     "gpu": g.name, "reference": g.name,
                     "published": src.tokens_per_gpu_s, "predicted": predicted,
                     "pct_error": (predicted / src.tokens_per_gpu_s - 1) * 100,
                     "engine": src.engine, "source": src.source, "what": what,
                     "mfu": run.mfu, "predicted_mfu": e.mfu})
    return rows, apart


def serving() -> tuple[list[dict], int]:
    """(throughput rows predicted at the median share of the others, how many the held-out ceiling rejects)."""
    def kind_of(precision: str) -> str:
        return "bf16" if precision in ("bf16", "fp16") else precision

    reached = [f for f in SE.all_reached() if f.row.ttft_s is None and f.efficiency <= 1]
    rows, rejected = [], 0
    for f in reached:
        others = [o.efficiency for o in reached if o is not f and kind_of(o.row.precision) == kind_of(f.row.precision)]
        if not others:
            continue
        own = M.CEILINGS.get(f.row.precision, M.DECODE_CEILING)[0]   # gpt-fast's and gpuarena's own
        ceiling = max(max(others) * (1 + PUBLISHED_SPREAD), own)
        rejected += f.efficiency > ceiling
        predicted = f.bound * statistics.median(others)
        published = f.row.tokens_per_s_per_gpu
        rows.append({"path": "hold-out serving", "workload": "llm-serve", "precision": f.row.precision,
                     "gpu": catalog.match(f.row.gpu).name, "reference": catalog.match(f.row.gpu).name,
                     "published": published, "predicted": predicted, "pct_error": (predicted / published - 1) * 100,
                     "engine": f.row.engine, "source": f.row.source, "what": f.text(),
                     "share": f.efficiency, "held_out_ceiling": ceiling})
    return rows, rejected
