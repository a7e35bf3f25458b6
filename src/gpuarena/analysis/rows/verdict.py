"""Verdicts as values, so that a reader counts them by member, never by parsing their text."""

from __future__ import annotations

from enum import Enum

from gpuarena.analysis.rows.common import ratio_text


class CompareVerdict(str, Enum):
    """The verdict on a ratio of throughputs and its 95% interval (analysis/verbs/compare.py): faster or
    slower only when the interval leaves 1.0.  Each value is the text `gpuarena compare` prints; faster
    and slower print after the ratio ("1.23x faster", "0.81x (slower)"), see ``text``."""

    FASTER = "faster"
    SLOWER = "(slower)"
    NO_DIFFERENCE = "no significant difference"
    NO_CI_PUBLISHED = "no CI (published)"
    NO_CI_TOO_FEW = "no CI (too few repeats)"

    def text(self, ratio: float) -> str:
        """The verdict as printed and stored in the JSON: with the ratio where it is faster or slower."""
        if self in (CompareVerdict.FASTER, CompareVerdict.SLOWER):
            return f"{ratio_text(ratio)} {self.value}"
        return self.value

    @property
    def no_ci(self) -> bool:
        """No interval to judge by (a published figure, or too few repeats)."""
        return self in (CompareVerdict.NO_CI_PUBLISHED, CompareVerdict.NO_CI_TOO_FEW)
