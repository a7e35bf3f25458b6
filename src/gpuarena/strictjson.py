"""JSON as gpuarena reads what a user or another machine gives it: strict.

Python's json accepts NaN, Infinity and -Infinity, and reads 1e999 as infinity; JSON has no
way to write any of them back, so a value read that way imports, then breaks every export
of the database.  ``loads`` refuses each with a ValueError naming it.
"""

from __future__ import annotations

import json
import math


def _no_constants(name):
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is not a finite number")
    return value


def loads(text: str):
    """json.loads, refusing NaN, Infinity and numbers that overflow to infinity (ValueError)."""
    return json.loads(text, parse_constant=_no_constants, parse_float=_finite_float)
