"""The verdicts analysis returns, as enums whose values are the texts people and JSON read.

Code compares members (``row.verdict is ClaimVerdict.PLAUSIBLE``), never parses the text; the text
is the value, so a member prints, formats and dumps to JSON as that text and the output is the same
as when verdicts were strings.
"""

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


class _Text(str, Enum):
    """A verdict that prints as its text (str() and f-strings give the value, not the member's name)."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class ClaimVerdict(_Text):
    """`gpuarena check`: a claimed figure against the physics that bounds it (analysis/verbs/check.py).

    The last two judge article 001's LLM-training claims (analysis/physics/llm_claims.py judge): a saving
    smaller than the model gives, and a figure the model does not bear out."""

    PLAUSIBLE = "plausible"
    IMPLAUSIBLE = "implausible"
    IMPOSSIBLE = "impossible"
    UNDERSTATED = "understated"
    NOT_SUPPORTED = "not supported"


class Health(_Text):
    """`gpuarena doctor` and `fleet`: a GPU's, a link's or a host's verdict (analysis/verbs/doctor.py),
    its members worst first; OK and CHECK are within expected (exit code 0)."""

    FAIL = "FAIL"
    WRONG = "WRONG"
    SLOW = "SLOW"
    CHECK = "CHECK"
    OK = "OK"

    @property
    def accepted(self) -> bool:
        """Within expected: the doctor's exit code is 0 when every verdict is."""
        return self in (Health.CHECK, Health.OK)

    @classmethod
    def worst(cls, verdicts) -> Health:
        """The worst of some verdicts (FAIL before WRONG before SLOW before CHECK before OK)."""
        order = list(cls)
        return min((cls(v) for v in verdicts), key=order.index)
