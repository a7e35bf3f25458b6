"""The serving frontier GPUs are compared by: output tokens/s per GPU against tokens/s per user.

Every endpoint-serve point counts: each point of a sweep (``rate=sweep`` or ``concurrency=sweep``,
stored in ``extra.sweep.points``) and each result's timed figure.  A point's throughput per GPU is
its output tokens/s over the server's GPUs; its speed per user is 1000 / its median TPOT in ms
(the tokens/s one streaming user reads, SemiAnalysis InferenceMAX's "interactivity").  One curve
per engine, GPU and setting (the setting without its rate or concurrency); its frontier keeps the
points no other point beats on both axes.  The SLO line is 1000 / ``slo_tpot_ms`` tokens/s per
user; the best point under the SLO is the one of most tokens/s per GPU among those that held the
SLO attainment (TTFT and TPOT of the stated share of requests), which keeps it right of the line.
"""

from __future__ import annotations

from typing import Optional

from pydantic import BaseModel, Field

from gpuarena.analysis.rows import common as R
from gpuarena.analysis.rows.engine import engine_of
from gpuarena.analysis.verbs.endpoints import ok_as, lengths_text, mix_text
from gpuarena.store.result import Result


class Point(BaseModel):
    """One point of a curve: output tokens/s per GPU at tokens/s per user, whether it held the SLO, where."""

    per_gpu: float
    per_user: float
    holds: bool
    at: str                            # "rate 4 (sweep)", "concurrency 8", "all at once"


class Curve(BaseModel):
    """One engine on one GPU at one setting: its points, its frontier, the SLO line, the best point under it."""

    engine: str
    gpu: str
    setting: str
    points: list[Point] = Field(default_factory=list)
    slo_tpot_ms: Optional[int | float]      # as the result's parameter says it (50 stays 50)
    results: list[int] = Field(default_factory=list)
    frontier: list[Point] = Field(default_factory=list)
    slo_per_user: Optional[float] = None
    best: Optional[Point] = None


def _setting(r: Result) -> str:
    """The setting a curve shares: model, API, lengths and mix, SLOs (not the rate or concurrency)."""
    p = r.params
    return (f"{r.extra.model or p.get('model') or '?'} ({p.get('api')}), {lengths_text(p)}{mix_text(p)}, "
            f"SLO TTFT {p.get('slo_ttft_ms')} ms / TPOT {p.get('slo_tpot_ms')} ms")


def _pt(tps, tpot_p50, holds: bool, gpus: int, label: str) -> Point | None:
    if not tps or not tpot_p50:
        return None
    return Point(per_gpu=tps / gpus, per_user=1000.0 / tpot_p50, holds=bool(holds), at=label)


def points(r: Result) -> list[Point]:
    """A result's points: its sweep's, then its timed figure."""
    e, gpus = r.extra, r.extra.server_gpus or 1
    out = []
    for sp in (e.sweep or {}).get("points") or []:
        key = "rate" if "rate" in sp else "concurrency"
        out.append(_pt(sp.get("output_tokens_per_s"), (sp.get("tpot_ms") or {}).get("p50"), sp.get("holds"), gpus,
                       f"{key} {sp.get(key):g} (sweep)"))
    target = r.params.get("slo_attainment", 0.9)
    at = (f"concurrency {e.concurrency}" if e.concurrency else
          "all at once" if e.rate_requests_per_s in (None, float("inf")) else f"rate {e.rate_requests_per_s:g}")
    out.append(_pt(e.output_tokens_per_s, e.tpot_ms.p50 if e.tpot_ms else None,
                   (e.slo_attainment or 0) >= target, gpus, at))
    return [p for p in out if p]


def frontier(pts: list[Point]) -> list[Point]:
    """The points no other beats on both axes, by tokens/s per user (fastest user first)."""
    out, best = [], -1.0
    for p in sorted(pts, key=lambda p: (-p.per_user, -p.per_gpu)):
        if p.per_gpu > best:
            out.append(p)
            best = p.per_gpu
    return out


def curves(results: list[Result]) -> list[Curve]:
    """One curve per (engine, GPU, setting): its points, frontier, SLO line and best point under the SLO."""
    groups: dict[tuple, Curve] = {}
    for r in results:
        if not ok_as(r, "endpoint"):
            continue
        key = (engine_of(r), R.gpu_of(r), _setting(r))
        c = groups.setdefault(key, Curve(engine=key[0], gpu=key[1], setting=key[2],
                                         slo_tpot_ms=r.params.get("slo_tpot_ms")))
        c.points += points(r)
        c.results.append(r.id)
    out = []
    for c in groups.values():
        if not c.points:
            continue
        held = [p for p in c.points if p.holds]
        c.frontier = frontier(c.points)
        c.slo_per_user = 1000.0 / c.slo_tpot_ms if c.slo_tpot_ms else None
        c.best = max(held, key=lambda p: p.per_gpu) if held else None
        out.append(c)
    out.sort(key=lambda c: (c.setting, -(c.best.per_gpu if c.best else 0), c.engine, c.gpu))
    return out


def lines(cs: list[Curve]) -> list[str]:
    """The frontier in words: one line per curve, its frontier points and its best point under the SLO."""
    out = []
    for c in cs:
        front = "; ".join(f"{p.per_user:,.1f} -> {p.per_gpu:,.1f}" for p in c.frontier)
        best = c.best
        verdict = (f"best under the SLO: {best.per_gpu:,.1f} output tok/s per GPU at {best.per_user:,.1f} "
                   f"tok/s per user ({best.at})" if best else "no point held the SLO")
        out.append(f"{c.engine} on {c.gpu} [{c.setting}]: frontier (tok/s per user -> tok/s per GPU) "
                   f"{front}; SLO line {c.slo_per_user or 0:,.1f} tok/s per user; {verdict}")
    return out
