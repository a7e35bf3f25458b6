"""Is a published figure physically possible, judged as stated?

Every verdict comes from analysis.physics, the roofline every verb asks: the claim's
per-GPU throughput at its conditions (batch, sequence length, image size, diffusion steps),
with the precision judged as the arithmetic actually ran on that GPU generation
(analysis.precision: FP32 tensors on an A100 run ResNet-50's convolutions in TF32, BERT's
matmuls in IEEE FP32; a V100 has no TF32).  Verdicts:

- impossible: above the peak of that precision (the reason names the one it would need);
- implausible: above the tighter of the two ceilings credibly reached on that workload, precision
  class and architecture generation (the best share of the compute peak and of the memory roof), or
  above the card's own best published figure (physics.Limit; the reason names the bound that holds
  and its source);
- plausible: otherwise; "unverified" (in the reason and the ``unverified`` field) where no evidence
  on the generation, or framework figures alone, set the ceiling the claim is above.

A multi-GPU scaling coefficient above 1 is impossible; below the interconnect model's
no-overlap floor it is still plausible (data loading, stragglers and launch gaps lose more
than the wire), and the reason says how much the interconnect alone explains.

A micro-benchmark's figure (a matmul's TFLOP/s, a copy's or a host link's GB/s, an all-reduce's bus
bandwidth) is judged by analysis/physics/micro_check.py against the catalog's bound for it.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, RootModel

from gpuarena.analysis.rows import precision as P
from gpuarena.analysis.rows.verdict import ClaimVerdict
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry

NAMES = P.NAMES
Num = Union[int, float]          # a figure keeps its type: 3 stays 3 in the JSON, 3.0 stays 3.0


class ClaimRow(BaseModel):
    """One claim's verdict with every assumption it rests on.  The fields every physics states are typed
    here; each physics adds its own figures (bound_by, credible_tokens_per_s, predicted_min_scaling,
    expected_low, ...), kept as given.  JSON: the keys the physics set (``model_dump(exclude_unset=True)``)."""

    model_config = ConfigDict(extra="allow")
    gpu: str
    workload: str
    precision: Optional[str] = None
    executed: Optional[str] = None            # the precision the arithmetic ran as (analysis/rows/precision.py)
    executed_as: Optional[str] = None
    batch_size: Optional[int] = None
    params: dict[str, Any] = {}
    gpus: int = 1
    replicas: Optional[int] = None
    throughput: Optional[Num] = None          # items/s, all GPUs together
    latency: Optional[Num] = None             # s/item
    scaling: Optional[Num] = None             # a multi-GPU scaling coefficient
    claim_text: Optional[str] = None          # a figure in its own unit (a micro-benchmark's, a TTFT)
    implied_tflops: Optional[Num] = None
    peak_tflops: Optional[Num] = None
    share_of_peak: Optional[Num] = None
    credible_max: Optional[Num] = None        # the highest figure the evidence allows, where one bounds it
    ceiling: Optional[dict[str, Any]] = None
    source: str = ""
    judged_on: Optional[list[str]] = None     # a loosely named GPU judged on each catalog card it names
    verdict: ClaimVerdict
    reason: str


class Check(RootModel[list[ClaimRow]]):
    """`gpuarena check`: one verdict row per claim, in the claims' order."""

    def __iter__(self):
        return iter(self.root)

    def __len__(self) -> int:
        return len(self.root)

    def __getitem__(self, i: int) -> ClaimRow:
        return self.root[i]


def check_claim(claim: dict, store=None) -> ClaimRow:
    """One claim {gpu, workload, precision, batch_size, throughput | latency[, seq_len, image_size, steps,
    gpus, scaling, source]} -> verdict row with every assumption (see COLUMNS and the JSON output).

    A loosely named GPU that fits several catalog cards ("H100": SXM5 and PCIe) is judged on each; when
    every variant gives the same verdict that is the answer (the row says it held for all of them),
    otherwise the ambiguity is refused with each variant's verdict."""
    cands = catalog.candidates(claim.get("gpu") or "")
    if len(cands) > 1:
        names = ", ".join(g.short for g in cands)
        rows, refused = [], []
        for g in cands:
            try:
                rows.append(_check_one({**claim, "gpu": g.name}, store))
            except UserError as e:
                refused.append(f"{g.short}: {e}")
        if refused:
            raise UserError(f"GPU {claim['gpu']!r} is ambiguous ({names}) and cannot be judged on every one "
                            f"({'; '.join(refused)}); name one")
        if len({r.verdict for r in rows}) == 1:
            worst = rows[0]
            return worst.model_copy(update={"reason": f"{claim['gpu']} names {names}: {worst.verdict} on every one; "
                                                      f"{worst.reason}", "judged_on": [g.name for g in cands]})
        raise UserError(f"GPU {claim['gpu']!r} is ambiguous and the verdict depends on which: "
                        + "; ".join(f"{r.gpu}: {r.verdict}" for r in rows) + "; name one")
    return _check_one(claim, store)


def _check_one(claim: dict, store=None) -> ClaimRow:
    """The physics' verdict row, typed."""
    return ClaimRow.model_validate(_physics_row(claim, store))


def _physics_row(claim: dict, store=None) -> dict:
    """One claim on one catalog card: a micro-benchmark's or collective's figure by the device figure it
    measures (a matmul's TFLOP/s, a copy's GB/s, a bus bandwidth), anything else by its workload's physics
    (analysis/physics/models.py: the roofline, the serving model, the decoder-training model)."""
    if registry.fact(claim.get("workload"), "device_figure"):
        from gpuarena.analysis.physics.micro_check import check_micro
        from gpuarena.analysis.physics.ratio import allreduce_ratio_row

        if claim.get("vs") not in (None, "") and registry.fact(claim["workload"], "device_figure") == "allreduce-busbw":
            return allreduce_ratio_row(claim, store)     # one card's all-reduce against another's (a band)

        return check_micro(claim, store)
    from gpuarena.analysis.physics import models

    return models.of(claim.get("workload")).check(claim, store)


def check_claims(claims: list[dict], store=None) -> Check:
    """check_claim over many claims (all validated before any output)."""
    return Check([check_claim(c, store) for c in claims])


REQUIRED = ("gpu", "workload", "precision", "batch_size")
OPTIONAL = ("throughput", "latency", "seq_len", "image_size", "steps", "gpus", "scaling", "model", "prompt_len",
            "new_tokens", "source", "replicas", "ttft", "vs", "ratio")
# model, prompt_len, new_tokens: LLM claims (llm_claims.py); replicas, ttft, vs, ratio: serving (serving_claims.py)
MAX_CSV = 8 << 20
ARTICLE_CLAIMS = Path(__file__).resolve().parents[2] / "data" / "article_claims.csv"   # the report checks them


def read_claims(path: str) -> list[dict]:
    from gpuarena.safeio import read_text

    text = read_text(path, f"--csv {path}", MAX_CSV, encoding="utf-8-sig")
    with io.StringIO(text, newline="") as f:
        reader = csv.DictReader(f)
        try:
            reader.fieldnames = cols = _columns(path, reader.fieldnames or [])
            missing = [c for c in REQUIRED if c not in cols]
            if missing or not ({"throughput", "latency", "scaling", "ttft", "ratio"} & set(cols)):
                raise UserError(f"--csv {path}: missing column(s) {', '.join(missing) or 'throughput/latency/scaling'}"
                                f"; need {','.join(REQUIRED)} and one of throughput, latency, scaling (llm-serve: "
                                "or ttft, or vs and ratio)")
            rows = [dict(r) for r in reader]
        except csv.Error as exc:
            raise UserError(f"--csv {path}: not a CSV file ({str(exc)[:200]})") from None
    extra = next((i for i, r in enumerate(rows, 2) if None in r), None)
    if extra:
        raise UserError(f"--csv {path}: row {extra} has more fields than the header names")
    if not rows:
        raise UserError(f"--csv {path}: no claims")
    return rows


def _columns(path: str, header: list[str]) -> list[str]:
    """The header as check reads it: 'Seq-Len' or 'batch size' is seq_len or batch_size; a misspelt known
    column ('seqlen') is refused, since dropping it would judge the claim at a default; others are notes."""
    import difflib
    import re

    known = REQUIRED + OPTIONAL
    out = []
    for name in header:
        norm = re.sub(r"[\s-]+", "_", (name or "").strip().lower())
        close = difflib.get_close_matches(norm, known, n=1, cutoff=0.8)
        if norm not in known and close:
            raise UserError(f"--csv {path}: column {name!r} is not one check reads; did you mean {close[0]}?")
        out.append(norm if norm in known else name)
    return out
