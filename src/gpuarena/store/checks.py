"""The checks every stored figure and name goes through (store/result.py, extra.py,
environment.py): finite numbers in a range that comes from what they mean, names without
control characters (nor the bidi controls that reorder a line on a terminal), sizes and
nesting bounded."""

from __future__ import annotations

import json
import math
import re
from typing import Optional

from gpuarena.safeio import depth

# items/s in the units workloads count (an image, a token, a matmul, a GB): the fastest of them,
# a memory copy at an H200's 4.8 TB/s, is 4.8e3 GB/s, so 1e12 is no rate a GPU reaches.
MAX_THROUGHPUT = 1e12
MAX_SAMPLES = 100_000
MAX_PARAMS_CHARS = 4_000     # the params of one case as JSON
MAX_PARAM_STR = 500
MAX_EXTRA_CHARS = 1_000_000  # per-rank lists and a stderr tail fit; a 5 MB blob does not
MAX_FINGERPRINT_CHARS = 200_000
MAX_DEPTH_PARAMS = 4
MAX_DEPTH_EXTRA = 8
WORKLOAD_NAME = r"^[A-Za-z0-9_.:+-]+$"   # stored in every result; registry refuses a plugin name outside it
STATUSES = ("ok", "oom", "timeout", "crashed", "failed", "skipped")
# C0, DEL, C1, and the bidi controls (U+202E shows "gpu.exe" as "exe.upg"): never in a stored name
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI}]")
_CONTROL_BUT_LINES = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}]")


def valid_number(v, what: str, lo: float = 0.0, hi: float = 1e30):
    if v is None:
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo <= v <= hi:
        raise ValueError(f"{what} {v!r} is not a finite number in [{lo:g}, {hi:g}]")
    return v


def valid_name(v: Optional[str]) -> Optional[str]:
    if v is not None and _CONTROL.search(v):
        raise ValueError("contains a control character")
    return v


def valid_text(v: Optional[str]) -> Optional[str]:
    if v is not None and _CONTROL_BUT_LINES.search(v):
        raise ValueError("contains a control character")
    return v


def valid_no_nul(v: Optional[str]) -> Optional[str]:
    """An identity (uid, case_key) may hold any printable text, but never NUL: PostgreSQL's text cannot
    store it, so SQLite and PostgreSQL would disagree on what was written."""
    if v is not None and "\x00" in v:
        raise ValueError("contains a NUL character")
    return v


def valid_bounded(v, what: str, max_chars: int, max_depth: int):
    if depth(v, max_depth) > max_depth:
        raise ValueError(f"{what} nests deeper than {max_depth} levels")
    size = len(json.dumps(v, default=str))
    if size > max_chars:
        raise ValueError(f"{what} is {size} characters as JSON, over the {max_chars} limit")
    return v


def finite(x):
    """JSON and SQLite have no NaN: store None instead."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [finite(v) for v in x]
    return x
