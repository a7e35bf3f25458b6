"""Derived figures: what a result's figures mean against other results, computed when
results are read (analysis/derived.py, analysis/expected.py) and kept apart from the
stored ones, so a record never depends on which records existed when it was written."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict


class Derived(BaseModel):
    """The figures of one result against the results at hand; never stored."""

    model_config = ConfigDict(frozen=True)
    share_of_ceiling: Optional[float] = None         # of the best matmul measured on the device
    ceiling: Optional[dict[str, Any]] = None         # that matmul: tflops, precision, result_id, ...
    scaling_efficiency: Optional[float] = None       # against the run's 1-rank result
    scaling_baseline_id: Optional[int] = None
    scaling_n: Optional[int] = None
    scaling_efficiency_ci95: Optional[list[float]] = None
    expected: Optional[dict[str, Any]] = None        # analysis/expected.py: the figure a result should reach
    warnings: tuple[str, ...] = ()                   # `below-expected`, when it applies

    def as_extra(self) -> dict:
        """The figures as the keys older readers found in ``extra``."""
        return self.model_dump(exclude_none=True, exclude={"warnings"})
