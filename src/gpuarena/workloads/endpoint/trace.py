"""A timed trace to replay: one request per JSONL line, sent at the trace's own time.

Each line: ``timestamp`` (from the start of the trace, in ``trace_time_unit``: seconds, or ms as
Mooncake's published traces give it), ``input_length`` and ``output_length`` (tokens: the prompt
is that many words, max_tokens that many), and optionally ``hash_ids``, the ids of the prompt's
blocks of ``trace_block`` tokens (a block id stands for the same text wherever it appears, so
requests sharing ids share a prefix a server can cache; Mooncake's block is 512 tokens).  Lines
are replayed in time order; a bad line is refused with its number.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from gpuarena import safeio
from gpuarena.errors import UserError
from gpuarena.workloads.endpoint.mix import Session, Turn

MAX_TRACE_BYTES = 256 << 20
MAX_HASH_IDS = 100_000


def _count(row: dict, key: str, where: str) -> int:
    x = row.get(key)
    if not isinstance(x, int) or isinstance(x, bool) or not 1 <= x <= 10_000_000:
        raise UserError(f"{where}: {key} must be a positive integer (tokens), got {str(x)[:40]!r}")
    return x


def _line(row, where: str, scale: float) -> Session:
    if not isinstance(row, dict):
        raise UserError(f"{where}: not a JSON object")
    t = row.get("timestamp")
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
        raise UserError(f"{where}: timestamp must be a number >= 0 (time from the trace's start), "
                        f"got {str(t)[:40]!r}")
    n, m = _count(row, "input_length", where), _count(row, "output_length", where)
    ids = row.get("hash_ids", [])
    if not isinstance(ids, list) or len(ids) > MAX_HASH_IDS or not all(
            isinstance(h, int) and not isinstance(h, bool) and h >= 0 for h in ids):
        raise UserError(f"{where}: hash_ids must be a list of non-negative integers")
    return Session([Turn(n, m)], at=t * scale, hash_ids=ids)


def read(path: str, unit: str = "s") -> list[Session]:
    """The trace's requests in time order (offsets in seconds); UserError names a bad line."""
    what = f"trace_file {path}"
    text = safeio.read_text(str(Path(path).expanduser()), what, MAX_TRACE_BYTES)
    scale = 1e-3 if unit == "ms" else 1.0
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise UserError(f"{what}, line {i}: not JSON") from None
        out.append(_line(row, f"{what}, line {i}", scale))
    if not out:
        raise UserError(f"{what}: no requests in it")
    out.sort(key=lambda s: s.at)
    return out
