"""The number formats every printed figure uses, in one place.

Below the report in the import layers: the verbs' tables (report/text/) and the
report's sections both format numbers, and must agree.
"""

from __future__ import annotations

import math

# The repeats below which a 95% interval is low-confidence (t = 2.78 at 5, 12.7 at 2): measure
# flags the result, the store keeps its interval as it is, the table marks it "few repeats".
MIN_SAMPLES = 5


def fmt_num(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    ax = abs(x)
    if ax >= 1e15:   # an interval of 2 noisy repeats: 1.1e+17, not 18 digits with commas
        return f"{x:.{digits - 1}e}"
    if ax >= 1000:
        return f"{x:,.0f}"
    if ax >= 100:
        return f"{x:.1f}"
    if ax >= 1:
        return f"{x:.{digits - 1}f}"
    return f"{x:.{digits}g}"


def fmt_bytes(b) -> str:
    if b is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(b) < 1024 or unit == "TiB":
            return f"{b:.1f} {unit}" if unit != "B" else f"{b} B"
        b /= 1024
    return "-"
