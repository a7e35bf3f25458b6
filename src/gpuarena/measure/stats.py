"""Statistics over raw samples.

Every figure gpuarena stores is derived from the raw per-repeat samples, which
are stored beside it (pyperf's habit), so a statistic can always be recomputed.
The 95% confidence interval is Student's t interval computed on the log scale
(the mean of log x, +- t * stdev(log x) / sqrt(n), exponentiated): every sample
is a positive rate or time, so a throughput interval can never go below zero,
and the interval of seconds per step is exactly the reciprocal of the interval
of steps per second.  With the article's ten repeats the normal approximation
would be ~10% too narrow, hence t.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass

# Two-sided 95% Student t quantiles t_{0.975, df} for df = 1..30 (standard tables).
_T975 = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
]

CV_WARN = 0.05      # a spread above 5% of the mean is flagged
from gpuarena.numbers import MIN_SAMPLES  # noqa: E402 - fewer repeats than this is flagged


def t975(df: int) -> float:
    """Two-sided 95% t quantile; the normal 1.96 beyond the table (df > 30 is within 2%)."""
    if df < 1:
        return math.nan
    if df <= len(_T975):
        return _T975[df - 1]
    # Cornish-Fisher style correction of the normal quantile, good to 3 decimals for df > 30.
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    mean: float
    stdev: float
    cv: float
    ci95_low: float
    ci95_high: float
    min: float
    max: float
    unit: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def log_interval(xs: list[float]) -> tuple[float, float]:
    """95% t-interval of the geometric mean (NaNs below two samples)."""
    n = len(xs)
    if n < 2:
        return math.nan, math.nan
    if min(xs) <= 0:  # no log of zero: the linear t-interval, still never below zero
        half = t975(n - 1) * statistics.stdev(xs) / math.sqrt(n)
        mean = statistics.fmean(xs)
        return max(0.0, mean - half), mean + half
    logs = [math.log(x) for x in xs]
    centre = statistics.fmean(logs)
    half = t975(n - 1) * statistics.stdev(logs) / math.sqrt(n)
    return math.exp(centre - half), math.exp(centre + half)


def summarize(samples: list[float], unit: str = "") -> Summary:
    """Median, mean, sample stdev, coefficient of variation and the 95% log-scale t-interval."""
    xs = [float(x) for x in samples]
    if not xs:
        raise ValueError("no samples to summarize")
    if any(not math.isfinite(x) for x in xs):
        raise ValueError("samples must be finite numbers")
    n = len(xs)
    mean = statistics.fmean(xs)
    median = statistics.median(xs)
    stdev = statistics.stdev(xs) if n > 1 else 0.0
    cv = stdev / mean if mean else 0.0
    low, high = log_interval(xs)
    return Summary(n=n, median=median, mean=mean, stdev=stdev, cv=cv,
                   ci95_low=low, ci95_high=high, min=min(xs), max=max(xs), unit=unit)


def warnings_for(summary: Summary, label: str = "throughput") -> list[str]:
    """The self-checks a result carries (pyperf's format_checks)."""
    out = []
    if summary.n < MIN_SAMPLES:
        out.append(f"only {summary.n} samples of {label} (fewer than {MIN_SAMPLES}): the interval is wide")
    if summary.cv > CV_WARN:
        out.append(f"{label} spread is high: CV {summary.cv:.1%} > {CV_WARN:.0%}")
    return out


def ratio_ci95(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """Ratio of means a/b with a 95% interval on the log scale, like `summarize`'s.

    log(mean a / mean b) has variance CV_a^2/n_a + CV_b^2/n_b to first order (the
    delta method); the interval r * exp(+-t * sd) is positive and the interval
    of b/a is exactly its reciprocal.  Used by compare: a ratio whose interval
    contains 1.0 is "no significant difference".
    """
    sa, sb = summarize(a), summarize(b)
    r = sa.mean / sb.mean
    var = 0.0
    if sa.n > 1:
        var += (sa.stdev / sa.mean) ** 2 / sa.n
    if sb.n > 1:
        var += (sb.stdev / sb.mean) ** 2 / sb.n
    df = max(1, min(sa.n, sb.n) - 1)
    half = t975(df) * math.sqrt(var)
    return r, r * math.exp(-half), r * math.exp(half)


def nearest_rank(xs: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100): a value that was observed, never interpolated."""
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(-(-q * len(s) // 100)) - 1))
    return s[k]
