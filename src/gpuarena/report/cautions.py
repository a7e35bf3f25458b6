"""Warnings grouped by what they change about a figure.  A result at the card's power cap is
a card doing its job (its figure is the sustained speed), so it is not a caution; a diverged
run, a wide spread, too few repeats or a clock slowed by heat are, each with what it means."""

from __future__ import annotations

import re

KINDS = (   # (kind, matches a warning text, what it changes)
    ("diverged (NaN)", re.compile(r"NaN|nan/inf", re.I),
     "not a speed record: a diverging run can be faster than a finite one; never used for advice or the answer"),
    ("noisy (CV > 5%)", re.compile(r"spread is high|CV [\d.]+%"),
     "a difference smaller than its interval is not a difference"),
    ("few repeats", re.compile(r"only \d+ samples"), "the interval is wide: compare with care"),
    ("slowed by heat or power brake", re.compile(r"throttled.*(thermal|hw_slowdown|hw_power_brake)", re.I),
     "below the card's sustained speed: re-run with better cooling before comparing"),
    ("processes disagree", re.compile(r"process", re.I), "the figure depends on the process: use the interval"),
)
POWER_CAP = re.compile(r"throttled during the timed window: sw_power_cap$")
INFO = ("at the power cap", "the card's normal limit under full load: the figure is its sustained speed")


def at_power_cap_only(r: dict) -> bool:
    """Throttled only by the power cap: the card at its normal limit, not a caution."""
    throttles = [w for w in r.get("warnings") or [] if "throttled" in w]
    return bool(throttles) and all(POWER_CAP.search(w) for w in throttles)


def shown_flags(r: dict, flags: list[str]) -> list[str]:
    """A result's flags as a reader should see them: "throttled" left out when only the power cap did it."""
    return [f for f in flags if not (f == "throttled" and at_power_cap_only(r))]


def kind_of(warning: str) -> tuple[str, str]:
    if POWER_CAP.search(warning):
        return INFO
    for kind, pattern, means in KINDS:
        if pattern.search(warning):
            return kind, means
    return "other", "read the warning before using the figure"


def grouped(rows: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """{(kind, what it changes): results carrying it}, kinds in KINDS order, the power cap last."""
    out: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        seen = set()
        for w in r.get("warnings") or []:
            k = kind_of(w)
            if k not in seen:
                seen.add(k)
                out.setdefault(k, []).append(r)
    order = [(k, m) for k, _, m in KINDS] + [("other", "read the warning before using the figure"), INFO]
    return {k: out[k] for k in order if k in out}


def caution_counts(rows: list[dict]) -> list[tuple[str, int]]:
    """[(kind, results)] for the kinds that change how a figure may be used (not the power cap)."""
    return [((SHORT.get(k[0], k[0]) if len(rs) > 1 else ONE.get(k[0], k[0])), len(rs))
            for k, rs in grouped(rows).items() if k != INFO]


SHORT = {"diverged (NaN)": "diverged runs (never shown or used here)", "few repeats": "with few repeats"}
ONE = {"diverged (NaN)": "diverged run (never shown or used here)", "few repeats": "with few repeats"}
