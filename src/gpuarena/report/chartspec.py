"""What a chart draws, as the report's sections build it: lines, bar groups and frontier curves.

report/charts.py draws them; the sections import only this module, so building a report that
draws nothing never loads matplotlib (charts.py does, at import).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Series:
    """One line of lines_with_ci: its points, an optional 95% CI per point, a colour, dashed for a model."""

    label: str
    x: list
    y: list
    lo: list | None = None
    hi: list | None = None
    color: str | None = None
    dashed: bool = False


@dataclass(frozen=True)
class BarGroup:
    """One bar per category (None: no bar), with optional CI bounds; upper marks a value that is an upper bound."""

    label: str
    values: list
    lo: list | None = None
    hi: list | None = None
    color: str | None = None
    upper: list | None = None


@dataclass(frozen=True)
class FrontierPoint:
    per_user: float     # tokens/s per user (x)
    per_gpu: float      # output tokens/s per GPU (y)


@dataclass(frozen=True)
class FrontierCurve:
    """One serving curve: every point, the frontier through them, the best point under the SLO and the SLO line."""

    label: str
    points: list[FrontierPoint]
    frontier: list[FrontierPoint]
    best: FrontierPoint | None = None
    slo_per_user: float | None = None
