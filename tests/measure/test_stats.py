"""Property-based tests (hypothesis) of measure/stats.py: the invariants every
summary must keep whatever the samples, plus known answers."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpuarena.measure import stats

# Throughputs and seconds per step: positive, finite, spanning the range seen in
# practice (a slow CPU step to a fast GPU kernel) with room either side.
positive = st.floats(min_value=1e-6, max_value=1e9, allow_nan=False, allow_infinity=False)
samples = st.lists(positive, min_size=1, max_size=60)
scale = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)


def close(a: float, b: float, rel: float = 1e-9) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12 * max(1.0, abs(a), abs(b)))


@settings(max_examples=300, deadline=None)
@given(samples)
def test_summary_invariants(xs):
    s = stats.summarize(xs)
    assert s.n == len(xs)
    assert s.min <= s.median <= s.max
    assert s.min == min(xs) and s.max == max(xs)
    tol = 1e-9 * s.max
    assert s.min - tol <= s.mean <= s.max + tol
    assert s.stdev >= 0 and s.cv >= 0
    if s.n == 1:
        assert s.stdev == 0 and s.cv == 0
        assert math.isnan(s.ci95_low) and math.isnan(s.ci95_high)
    else:
        gmean = statistics.geometric_mean(xs)
        assert 0 < s.ci95_low <= gmean * (1 + 1e-9) and gmean <= s.ci95_high * (1 + 1e-9)
        # symmetric on the log scale: the geometric mean is the interval's geometric centre
        assert close(math.sqrt(s.ci95_low * s.ci95_high), gmean, rel=1e-6)


@settings(max_examples=200, deadline=None)
@given(st.lists(positive, min_size=2, max_size=40))
def test_interval_of_times_is_the_reciprocal_of_the_interval_of_rates(xs):
    rates, times = stats.summarize(xs), stats.summarize([1 / x for x in xs])
    assert close(times.ci95_low, 1 / rates.ci95_high, rel=1e-6)
    assert close(times.ci95_high, 1 / rates.ci95_low, rel=1e-6)


@settings(max_examples=200, deadline=None)
@given(st.lists(positive, min_size=2, max_size=40), scale)
def test_cv_is_scale_invariant(xs, k):
    a, b = stats.summarize(xs), stats.summarize([k * x for x in xs])
    assert math.isclose(a.cv, b.cv, rel_tol=1e-6, abs_tol=1e-9)
    assert math.isclose(b.median, k * a.median, rel_tol=1e-9)
    assert math.isclose(b.mean, k * a.mean, rel_tol=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.lists(positive, min_size=2, max_size=40))
def test_interval_narrows_with_more_of_the_same(xs):
    once, twice = stats.summarize(xs), stats.summarize(xs + xs)
    assume(once.stdev > 1e-9 * once.mean)   # a spread above float rounding (xs=[1e-6 * (1 + 2e-16), 1e-6] is not)
    assert (twice.ci95_high - twice.ci95_low) < (once.ci95_high - once.ci95_low)


@settings(max_examples=300, deadline=None)
@given(st.lists(positive, min_size=1, max_size=30), st.lists(positive, min_size=1, max_size=30))
def test_ratio_interval_contains_the_ratio(a, b):
    r, lo, hi = stats.ratio_ci95(a, b)
    assert close(r, statistics.fmean(a) / statistics.fmean(b), rel=1e-9)
    assert lo <= r * (1 + 1e-12) and r <= hi * (1 + 1e-12)
    assert r > 0


@given(st.lists(positive, min_size=2, max_size=30))
def test_ratio_of_a_sample_with_itself_is_one(xs):
    r, lo, hi = stats.ratio_ci95(xs, xs)
    assert close(r, 1.0) and lo <= 1.0 <= hi


@given(st.lists(positive, max_size=9), st.sampled_from([math.nan, math.inf, -math.inf]), st.integers(0, 9))
def test_non_finite_samples_are_refused(xs, bad, at):
    xs.insert(min(at, len(xs)), bad)
    with pytest.raises(ValueError):
        stats.summarize(xs)


def test_empty_is_refused():
    with pytest.raises(ValueError):
        stats.summarize([])


def test_known_answer_ten_repeats():
    # 10 repeats (the article's count), mean 100:
    xs = [95, 97, 98, 99, 100, 100, 101, 102, 103, 105]
    s = stats.summarize(xs)
    assert s.median == 100 and s.mean == 100
    assert s.stdev == pytest.approx(statistics.stdev(xs))
    # log scale: mean(ln x) = 4.6047798, stdev(ln x) = 0.0294614, t_{0.975, 9} = 2.262
    # -> exp(4.6049700 -+ 2.262 * 0.0290893 / sqrt(10)) = 97.88 .. 102.09
    assert (s.ci95_low, s.ci95_high) == (pytest.approx(97.8764, abs=1e-3), pytest.approx(102.0899, abs=1e-3))


def test_known_answer_noisy_smoke_row_stays_positive():
    # A tiny CPU case with two wild repeats: the linear t-interval of the mean was
    # 1.4 -+ 12.706 * 1.27 / sqrt(2) = -10.0 .. 12.8; on the log scale it is positive.
    s = stats.summarize([0.5, 2.3])
    assert s.ci95_low == pytest.approx(math.exp(math.log(1.07238) - 12.706 * 1.07908 / math.sqrt(2)), rel=1e-3)
    assert 0 < s.ci95_low < 0.5 and s.ci95_high > 2.3


def test_known_answer_ratio():
    # means 110 / 100 = 1.1 over 5 repeats each; the interval contains 1.0 (not significant)
    a = [100, 105, 110, 115, 120]
    b = [95, 97.5, 100, 102.5, 105]
    r, lo, hi = stats.ratio_ci95(a, b)
    va = (statistics.stdev(a) / 110) ** 2 / 5
    vb = (statistics.stdev(b) / 100) ** 2 / 5
    half = 2.776 * math.sqrt(va + vb)  # t_{0.975, 4}
    assert r == pytest.approx(1.1)
    assert (lo, hi) == (pytest.approx(1.1 * math.exp(-half)), pytest.approx(1.1 * math.exp(half)))
    assert lo == pytest.approx(0.9935, abs=1e-3) and hi == pytest.approx(1.2179, abs=1e-3)
    # a clear 10% difference with little noise: the interval excludes 1.0
    r, lo, hi = stats.ratio_ci95([110, 111, 109, 110, 110], [100, 101, 99, 100, 100])
    assert r == pytest.approx(1.10) and lo > 1.0


def test_t_quantiles():
    assert stats.t975(1) == 12.706 and stats.t975(30) == 2.042
    assert stats.t975(9) == 2.262          # the article's ten repeats
    assert math.isnan(stats.t975(0))
    assert stats.t975(31) < 2.042 and stats.t975(10_000) == pytest.approx(1.96, abs=1e-3)
    qs = [stats.t975(df) for df in range(1, 200)]
    assert all(a > b for a, b in zip(qs, qs[1:]))  # falls monotonically towards 1.96
