"""A result dict as a row of the results table, and back: the columns, the JSON-encoded ones,
NaN stored as NULL, and the global identity (uid) a new row gets.  db.py (the Store) and
bundle.py (imports) both write results through insert_result."""

from __future__ import annotations

import datetime as dt
import json
import math
import sqlite3
import uuid
from typing import Any

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


def _finite(x):
    """JSON and SQLite have no NaN: store None instead."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def insert_statement(result: dict) -> tuple[str, list]:
    """The INSERT of one result dict; a result without a global identity (uid) gets one."""
    result = dict(result)
    if not result.get("uid") and result.get("source") != "published":
        result["uid"] = uuid.uuid4().hex
    cols = [c for c in _RESULT_COLUMNS if c in result and c != "id"
            and not (c == "created_at" and result[c] is None)]  # None: stamp it now
    values = []
    for c in cols:
        v = _finite(result[c])
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


def insert_result(conn, result: dict) -> int:
    """INSERT one result dict (the shape Store.results() returns) on an open transaction."""
    return conn.execute(*insert_statement(result)).lastrowid
