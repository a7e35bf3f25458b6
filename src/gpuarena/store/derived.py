"""Derived figures: what a result's figures mean against other results, computed when
results are read (analysis/rows/derived.py, analysis/verbs/expected.py) and kept apart from the
stored ones, so a record never depends on which records existed when it was written."""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict


class _Frozen(BaseModel):
    """A derived figure: frozen; read by attribute (e.figure, e.published.source)."""

    model_config = ConfigDict(frozen=True, extra="allow")


class Reference(_Frozen):
    """A figure a result is set against: a published row, or the median of stored results."""

    value: float
    n: Optional[int] = None                # stored: how many results the median is of
    source: str
    date: Optional[str] = None
    engine: Optional[str] = None           # published: the row's engine, batch size and precision
    batch_size: Optional[int] = None
    precision: Optional[str] = None
    ratio: Optional[float] = None          # the result's throughput over value


class ModelFigure(_Frozen):
    """The throughput model's figure (analysis/verbs/expected.py model_expectation)."""

    value: Optional[float] = None
    band: Optional[float] = None
    how: str = ""
    same_recipe: bool = False
    ratio: Optional[float] = None


class Expected(_Frozen):
    """The figure a result should reach (analysis/verbs/expected.py expect, analysis/verbs/expected_device.py for
    device checks): its basis, the measured ratio to it, the band [low, high] a healthy result falls
    in, where the figure comes from, and the causes of a flagged one.  ``unit`` is the figure's unit
    where it is not the result's throughput unit (a matmul's TFLOP/s, a collective's bus GB/s)."""

    figure: float
    basis: Literal["stored", "published", "model", "catalog"]
    ratio: Optional[float] = None          # measured / figure; None when nothing measured was given
    stored: Optional[Reference] = None
    band: float
    low: float
    high: Optional[float] = None
    source: Optional[str] = None
    unit: Optional[str] = None
    like_for_like: bool
    below: bool
    published: Optional[Reference] = None
    model: ModelFigure
    causes: Optional[list[str]] = None

    def summary(self) -> dict:
        """The ``expected`` of `results --format json`: {figure, low, high, unit, source, basis, ratio,
        below, causes} (unit None: the result's own throughput unit)."""
        return {"figure": self.figure, "low": self.low, "high": self.high, "unit": self.unit,
                "source": self.source, "basis": self.basis, "ratio": self.ratio, "below": self.below,
                "causes": list(self.causes or [])}


class Derived(BaseModel):
    """The figures of one result against the results at hand; never stored."""

    model_config = ConfigDict(frozen=True)
    share_of_ceiling: Optional[float] = None         # of the best matmul measured on the device
    ceiling: Optional[dict[str, Any]] = None         # that matmul: tflops, precision, result_id, ...
    scaling_efficiency: Optional[float] = None       # against the run's 1-rank result
    scaling_baseline_id: Optional[int] = None
    scaling_n: Optional[int] = None
    scaling_efficiency_ci95: Optional[list[float]] = None
    expected: Optional[Expected] = None              # analysis/verbs/expected.py: the figure a result should reach
    warnings: tuple[str, ...] = ()                   # `below-expected`, when it applies

    def as_extra(self) -> dict:
        """The figures as the keys older readers found in ``extra`` (expected as it was built)."""
        d = self.model_dump(exclude_none=True, exclude={"warnings"})
        if self.expected is not None:
            d["expected"] = self.expected.model_dump(exclude_unset=True)
        return d
