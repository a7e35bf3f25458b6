"""compare's verdict is a member of CompareVerdict; its text, stored in the JSON, is the same words as before."""

from __future__ import annotations

import math

from gpuarena.analysis.rows.verdict import CompareVerdict
from gpuarena.analysis.verbs import compare as C


def test_each_verdict_and_its_text():
    assert C.outcome(1.1, 1.3, False) is CompareVerdict.FASTER and C.verdict(1.2, 1.1, 1.3, False) == "1.20x faster"
    assert C.outcome(0.7, 0.9, False) is CompareVerdict.SLOWER and C.verdict(0.8, 0.7, 0.9, False) == "0.80x (slower)"
    assert C.verdict(1.004, 1.001, 1.008, False) == "1.004x faster"      # one more digit where 1.00x would hide it
    assert C.verdict(1.0, 0.9, 1.1, False) == "no significant difference"
    assert C.verdict(1.2, None, None, True) == "no CI (published)" == CompareVerdict.NO_CI_PUBLISHED.value
    assert C.verdict(1.2, None, None, False) == "no CI (too few repeats)"
    assert C.outcome(math.nan, 1.1, False) is CompareVerdict.NO_CI_TOO_FEW
    assert [v.no_ci for v in CompareVerdict] == [False, False, False, True, True]
