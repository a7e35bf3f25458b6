"""SQLite store.

One row per result, committed the moment its case ends.  WAL mode and a busy
timeout let several writers share a file; the schema is versioned through
``PRAGMA user_version`` and brought up to date by MIGRATIONS on open.
Results are returned as plain dicts (the JSON shape of `gpuarena results`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any, Iterable

from gpuarena.errors import UserError

DEFAULT_DB = "gpuarena.db"

# Each migration brings the schema from version i to i+1.  Never edit one that
# has shipped: append a new one.
MIGRATIONS: list[str] = [
    # 1: environments, runs, results
    """
    CREATE TABLE environments (
        id INTEGER PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        fingerprint TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        suite TEXT NOT NULL,
        device TEXT NOT NULL,
        env_id INTEGER REFERENCES environments(id),
        plan TEXT NOT NULL,            -- JSON list of the run's cases, for --resume
        argv TEXT,
        status TEXT NOT NULL DEFAULT 'running'   -- running | complete | interrupted
    );
    CREATE TABLE results (
        id INTEGER PRIMARY KEY,
        run_id TEXT REFERENCES runs(id),
        case_key TEXT NOT NULL,
        source TEXT NOT NULL DEFAULT 'measured',  -- measured | imported | published
        workload TEXT NOT NULL,
        workload_version INTEGER,
        code_hash TEXT,
        variant TEXT NOT NULL,
        params TEXT NOT NULL,
        size TEXT NOT NULL DEFAULT 'full',
        gpus INTEGER NOT NULL DEFAULT 1,
        device TEXT,
        device_name TEXT,
        env_id INTEGER REFERENCES environments(id),
        status TEXT NOT NULL CHECK (status IN ('ok','oom','timeout','crashed','failed')),
        error TEXT,
        unit TEXT,
        precision TEXT,
        throughput_median REAL,
        throughput TEXT,               -- JSON Summary of items/s
        latency TEXT,                  -- JSON Summary of seconds per step
        samples TEXT,                  -- JSON raw per-repeat seconds per step
        items_per_step REAL,
        flops_per_item REAL,
        tflops REAL,
        peak_memory_bytes INTEGER,
        compile_s REAL,
        power_w_mean REAL,
        power_w_max REAL,
        energy_j_per_item REAL,
        energy_source TEXT,
        temp_c_max REAL,
        sm_clock_mhz_mean REAL,
        throttled INTEGER,
        warnings TEXT,                 -- JSON list of strings
        telemetry TEXT,                -- JSON list of samples
        extra TEXT,                    -- JSON dict
        origin TEXT,                   -- for published rows: the source citation
        created_at TEXT NOT NULL
    );
    CREATE INDEX results_run ON results(run_id);
    CREATE INDEX results_workload ON results(workload, variant);
    """,
]

def _allow_status(status: str) -> str:
    """Migration: rebuild the results table (SQLite cannot alter a CHECK) allowing one more status."""
    v1 = MIGRATIONS[0]
    start = v1.index("CREATE TABLE results (")
    ddl = v1[start:v1.index(");", start) + 2].replace("CREATE TABLE results (", "CREATE TABLE results_new (")
    ddl = ddl.replace("'crashed','failed')", f"'crashed','failed','{status}')")
    return ddl + """
    INSERT INTO results_new SELECT * FROM results;
    DROP TABLE results;
    ALTER TABLE results_new RENAME TO results;
    CREATE INDEX results_run ON results(run_id);
    CREATE INDEX results_workload ON results(workload, variant);
    """


# 2: 'skipped': a workload that cannot run here (missing optional library or hardware feature)
MIGRATIONS.append(_allow_status("skipped"))


JSON_COLUMNS = ("params", "throughput", "latency", "samples", "warnings", "telemetry", "extra")


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def new_run_id() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def default_path() -> str:
    return os.environ.get("GPUARENA_DB") or DEFAULT_DB


def _finite(x):
    """JSON and SQLite have no NaN: store None instead."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


class Store:
    def __init__(self, path: str | os.PathLike | None = None, timeout_s: float = 60.0):
        self.path = str(path or default_path())
        parent = Path(self.path).resolve().parent
        if not parent.is_dir():
            raise UserError(f"database folder {parent} does not exist")
        try:
            self.conn = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA foreign_keys = ON")
            self._migrate()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc):  # another writer held it past the busy timeout
                raise UserError(f"{self.path}: another process kept the database locked for "
                                f"{timeout_s:g} s; try again when it is done") from None
            raise UserError(f"{self.path}: not a gpuarena database ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{self.path}: not a gpuarena database ({exc})") from None

    # --- schema -----------------------------------------------------------
    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise UserError(f"{self.path}: schema version {version} is newer than this gpuarena "
                            f"({len(MIGRATIONS)}); upgrade gpuarena")
        for i in range(version, len(MIGRATIONS)):
            with self.transaction():
                # re-check inside the write lock: another process may have migrated meanwhile
                current = self.conn.execute("PRAGMA user_version").fetchone()[0]
                if current > i:
                    continue
                for stmt in MIGRATIONS[i].split(";"):
                    if stmt.strip():
                        self.conn.execute(stmt)
                self.conn.execute(f"PRAGMA user_version = {i + 1}")

    @property
    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def transaction(self):
        return _Tx(self.conn)

    def close(self) -> None:
        self.conn.close()

    # --- environments and runs -------------------------------------------
    def env_id(self, fingerprint: dict) -> int:
        from gpuarena.measure.env import fingerprint_hash

        h = fingerprint_hash(fingerprint)
        with self.transaction():
            row = self.conn.execute("SELECT id FROM environments WHERE hash=?", (h,)).fetchone()
            if row:
                return row[0]
            cur = self.conn.execute(
                "INSERT INTO environments(hash, fingerprint, created_at) VALUES (?,?,?)",
                (h, json.dumps(fingerprint, default=str), now()))
            return cur.lastrowid

    def environment(self, env_id: int) -> dict | None:
        row = self.conn.execute("SELECT fingerprint FROM environments WHERE id=?", (env_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def create_run(self, suite: str, device: str, plan: list[dict], env_id: int | None,
                   argv: list[str] | None = None, run_id: str | None = None) -> str:
        run_id = run_id or new_run_id()
        with self.transaction():
            self.conn.execute(
                "INSERT INTO runs(id, created_at, suite, device, env_id, plan, argv) VALUES (?,?,?,?,?,?,?)",
                (run_id, now(), suite, device, env_id, json.dumps(plan), json.dumps(argv or [])))
        return run_id

    def run(self, run_id: str) -> dict:
        row = self.conn.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            ids = [r[0] for r in self.conn.execute("SELECT id FROM runs ORDER BY created_at DESC LIMIT 5")]
            raise UserError(f"no run {run_id!r} in {self.path}" + (f"; latest: {', '.join(ids)}" if ids else ""))
        d = dict(row)
        d["plan"] = json.loads(d["plan"])
        return d

    def runs(self) -> list[dict]:
        rows = self.conn.execute(
            "SELECT r.id, r.created_at, r.suite, r.device, r.status, COUNT(x.id) AS results "
            "FROM runs r LEFT JOIN results x ON x.run_id = r.id GROUP BY r.id ORDER BY r.created_at").fetchall()
        return [dict(r) for r in rows]

    def set_run_status(self, run_id: str, status: str) -> None:
        with self.transaction():
            self.conn.execute("UPDATE runs SET status=? WHERE id=?", (status, run_id))

    def done_keys(self, run_id: str) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT case_key FROM results WHERE run_id=?", (run_id,))}

    def latest_run_id(self) -> str | None:
        row = self.conn.execute("SELECT id FROM runs ORDER BY created_at DESC, rowid DESC LIMIT 1").fetchone()
        return row[0] if row else None

    # --- results ------------------------------------------------------------
    def add_result(self, result: dict) -> int:
        """Insert one result (a dict in the shape results() returns) and commit at once."""
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
        sql = f"INSERT INTO results({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
        for attempt in range(5):
            try:
                with self.transaction():
                    return self.conn.execute(sql, values).lastrowid
            except sqlite3.OperationalError as exc:  # locked past the busy timeout: back off
                if "locked" not in str(exc) or attempt == 4:
                    raise
                time.sleep(0.5 * (attempt + 1))
        raise AssertionError("unreachable")

    def results(self, run_ids: Iterable[str] | None = None, workload: str | None = None,
                source: str | None = None, status: str | None = None) -> list[dict]:
        where, args = [], []
        run_ids = list(run_ids or [])
        if run_ids:
            where.append(f"run_id IN ({', '.join('?' * len(run_ids))})")
            args += run_ids
        for col, val in (("workload", workload), ("source", source), ("status", status)):
            if val is not None:
                where.append(f"{col} = ?")
                args.append(val)
        sql = "SELECT * FROM results" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
        return [row_to_result(r) for r in self.conn.execute(sql, args)]


class DatabaseLocked(UserError, sqlite3.OperationalError):
    """A writer waited past the busy timeout.  Still an OperationalError (add_result
    backs off and retries it); a UserError once it reaches the CLI: one line, exit 2."""


class _Tx:
    """BEGIN IMMEDIATE ... COMMIT: takes the write lock up front, so writers queue instead of deadlocking."""

    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc):
                raise
            raise DatabaseLocked("another process kept the database locked past the busy timeout; "
                                 "try again when it is done") from None
        return self.conn

    def __exit__(self, exc_type, *rest):
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
        return False


_RESULT_COLUMNS = (
    "id", "run_id", "case_key", "source", "workload", "workload_version", "code_hash", "variant", "params",
    "size", "gpus", "device", "device_name", "env_id", "status", "error", "unit", "precision",
    "throughput_median", "throughput", "latency", "samples", "items_per_step", "flops_per_item", "tflops",
    "peak_memory_bytes", "compile_s", "power_w_mean", "power_w_max", "energy_j_per_item", "energy_source",
    "temp_c_max", "sm_clock_mhz_mean", "throttled", "warnings", "telemetry", "extra", "origin", "created_at",
)


def row_to_result(row: sqlite3.Row) -> dict[str, Any]:
    d = dict(row)
    for c in JSON_COLUMNS:
        if d.get(c) is not None:
            d[c] = json.loads(d[c])
    if d.get("throttled") is not None:
        d["throttled"] = bool(d["throttled"])
    d["warnings"] = d.get("warnings") or []
    return d
