"""A result dict as a row of the results table, and back: the columns, the JSON-encoded ones,
NaN stored as NULL, and the global identity (uid) a new row gets.  db.py (the Store) and
bundle.py (imports) both write results through insert_result."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import uuid
from typing import TYPE_CHECKING, Any

from gpuarena.errors import UserError
from gpuarena.redact import redact_tree
from gpuarena.store.checks import finite

if TYPE_CHECKING:
    from gpuarena.store.result import Result

JSON_COLUMNS = ("params", "throughput", "latency", "samples", "warnings", "telemetry", "extra")

_RESULT_COLUMNS = (
    "id", "run_id", "case_key", "source", "workload", "workload_version", "code_hash", "variant", "params",
    "size", "gpus", "device", "device_name", "env_id", "status", "error", "unit", "precision",
    "throughput_median", "throughput", "latency", "samples", "items_per_step", "flops_per_item", "tflops",
    "peak_memory_bytes", "compile_s", "power_w_mean", "power_w_max", "energy_j_per_item", "energy_source",
    "temp_c_max", "sm_clock_mhz_mean", "throttled", "warnings", "telemetry", "extra", "origin", "created_at",
    "uid",
)


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def insert_statement(result: dict) -> tuple[str, list]:
    """The INSERT of one result dict; a result without a global identity (uid) gets one.  Every text
    in it passes gpuarena/redact.py first: no password is ever stored, whatever field carried it."""
    result = redact_tree(dict(result))
    if not result.get("uid") and result.get("source") != "published":
        result["uid"] = uuid.uuid4().hex
    cols = [c for c in _RESULT_COLUMNS if c in result and c != "id"
            and not (c == "created_at" and result[c] is None)]  # None: stamp it now
    values = []
    for c in cols:
        v = finite(result[c])
        if c in JSON_COLUMNS and v is not None:
            v = json.dumps(v, default=str)
        if c == "throttled" and v is not None:
            v = int(bool(v))
        values.append(v)
    if "created_at" not in cols:
        cols.append("created_at")
        values.append(now())
    return f"INSERT INTO results({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", values


def legacy_uid(r: dict) -> str:
    """The identity of a row stored without one (the key imports used before uids; migration 3)."""
    extra = r.get("extra") or {}
    if r.get("source") == "imported" and extra.get("bundle_key"):
        return f"b:{extra['bundle_key']}"
    return f"b:{r.get('run_id')}/{r.get('id')}/{r.get('case_key')}/{r.get('created_at')}"

def row_to_result(row: sqlite3.Row) -> dict[str, Any]:
    d = dict(row)
    for c in JSON_COLUMNS:
        if d.get(c) is not None:
            d[c] = json.loads(d[c])
    if d.get("throttled") is not None:
        d["throttled"] = bool(d["throttled"])
    d["warnings"] = d.get("warnings") or []
    return d


class ResultRefused(UserError):
    """A result the store would not read back: refused before it is written, with the reason."""


COLUMN_DEFAULTS = {"source": "measured", "size": "full", "gpus": 1}   # the schema's DEFAULTs (migrations.py)


def stored_form(result: dict) -> dict:
    """result as the store keeps it and reads it back: NaN as None (JSON and SQLite have none),
    JSON columns through a JSON round trip, throttled as a bool."""
    d = {**COLUMN_DEFAULTS, **{k: finite(v) for k, v in result.items()}}
    for c in JSON_COLUMNS:
        if d.get(c) is not None:
            d[c] = json.loads(json.dumps(d[c], default=str))
    if d.get("throttled") is not None:
        d["throttled"] = bool(d["throttled"])
    d["warnings"] = d.get("warnings") or []
    d.setdefault("id", 0)
    return d


def validated(result: dict, as_stored: bool = False) -> "Result":
    """The one validation of a result, on the way in (Store.add_result, import) and on the way
    out (Store.results; as_stored: already read back, so no round trip): ResultRefused, one
    line, naming the field and why."""
    from pydantic import ValidationError

    from gpuarena.errors import pydantic_error_line
    from gpuarena.store.result import Result

    try:
        return Result.read(result) if as_stored else Result.model_validate(stored_form(result))
    except ValidationError as exc:
        raise ResultRefused(pydantic_error_line(exc)[:300]) from None
    except (ValueError, TypeError, RecursionError) as exc:
        raise ResultRefused(f"not storable as JSON ({exc.__class__.__name__})") from None


def insert_result(conn, result: dict) -> int:
    """INSERT one result dict (the shape Store.results() returns) on an open transaction."""
    return conn.execute(*insert_statement(result)).lastrowid
