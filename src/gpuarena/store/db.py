"""The store: an SQLite file, or a shared PostgreSQL database (store/postgres.py).

One row per result, committed the moment its case ends.  WAL mode and a busy
timeout let several writers share a file; the schema is versioned through
``PRAGMA user_version`` and brought up to date by MIGRATIONS on open.  A
``postgresql://`` URL opens the same schema (translated) on a server that many
nodes write to at once.  Results are read back as typed, frozen `Result`s
(store/result.py); they are written from dicts in the same shape.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sqlite3
import time
import uuid
from typing import TYPE_CHECKING, Any, Iterable

from gpuarena.errors import UserError
from gpuarena.redact import redact, redact_tree

if TYPE_CHECKING:
    from gpuarena.store.result import Result

DEFAULT_DB = "gpuarena.db"

from gpuarena.store import pg_connection, postgres  # noqa: E402
from gpuarena.store.lock import LockTx, live_lock_owner, lock_owner  # noqa: E402
from gpuarena.store.migrations import MIGRATIONS  # noqa: E402
from gpuarena.store.pool import select  # noqa: E402
from gpuarena.store.rows import ResultRefused, insert_result, now, row_to_result, validated  # noqa: E402


def new_run_id() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def default_path() -> str:
    value = os.environ.get("GPUARENA_DB")
    if value and value != value.strip():   # `export GPUARENA_DB=$(cat file)` keeps a newline nobody sees
        raise UserError(f"GPUARENA_DB={redact(value)[:300]!r}: a space or newline around the path; remove it")
    return value or DEFAULT_DB


def exists(path: str) -> bool:
    """Whether a database is there to read: a file, or any PostgreSQL URL (the server says)."""
    return postgres.is_url(path) or os.path.exists(path)


def _status(status: str | None, owner: str | None) -> str | None:
    """A run's status as it is: 'running' only while its owner lives.  A process that could not mark
    its run (the store stopped answering, or stayed locked, when the run ended) left 'running'
    behind; its run is interrupted, and --resume takes it."""
    if status == "running" and owner and live_lock_owner(owner, status) is None:
        return "interrupted"
    return status


class Store:
    """The results database.  readonly=True (reading commands) never changes the file;
    otherwise the file is checked (store/opening.py), switched to WAL and migrated."""

    def __init__(self, path: str | os.PathLike | None = None, timeout_s: float | None = None, readonly: bool = False):
        from gpuarena.store import opening

        timeout_s = pg_connection.timeout_default() if timeout_s is None else timeout_s
        self.timeout_s = timeout_s
        self.path = str(path or default_path())
        self.readonly = readonly
        self.skipped: list[tuple[Any, str]] = []   # rows results() could not use: (id, why)
        self.undeclared: list[tuple[Any, str, list[str]]] = []   # (id, workload, figures no built-in declares)
        self._rows: list[Result] | None = None        # every valid row, read once (see results())
        self.is_postgres = postgres.is_url(self.path)
        # where files that belong with the results go (reports/, kept results); a server has no folder
        self.folder = os.getcwd() if self.is_postgres else os.path.dirname(os.path.abspath(self.path))
        if self.is_postgres:
            url, self.path = self.path, postgres.redact(self.path)
            self.conn = pg_connection.connect(url, timeout_s, readonly)
            try:
                postgres.check_schema(self.conn, self.path, len(MIGRATIONS), readonly)
                if not readonly:
                    self._migrate()
            except BaseException:
                self.conn.close()
                raise
            return
        if readonly:
            self.conn = opening.open_readonly(self.path)
            return
        self.conn = opening.open_writable(self.path, timeout_s)
        try:
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise opening.sqlite_error(self.path, exc, timeout_s) from None

    # --- schema -----------------------------------------------------------
    def _migrate(self) -> None:
        version = self.schema_version
        if version > len(MIGRATIONS):
            raise UserError(f"{self.path}: schema version {version} is newer than this gpuarena "
                            f"({len(MIGRATIONS)}); upgrade gpuarena")
        for i in range(version, len(MIGRATIONS)):
            with self.transaction():
                # re-check inside the write lock: another process may have migrated meanwhile
                current = self.schema_version
                if current > i:
                    continue
                steps = postgres.migrations(MIGRATIONS)[i] if self.is_postgres else MIGRATIONS[i]
                for stmt in steps.split(";"):
                    if stmt.strip():
                        self.conn.execute(stmt)
                if self.is_postgres:
                    postgres.set_version(self.conn, i + 1)
                else:
                    self.conn.execute(f"PRAGMA user_version = {i + 1}")

    @property
    def schema_version(self) -> int:
        if self.is_postgres:
            return postgres.version(self.conn)
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def transaction(self):
        self._rows = None     # a write: the rows read so far are read again on the next results()
        return LockTx(self.conn)

    def replace_published(self, rows: list[dict]) -> None:
        """Swap every published row for ``rows``, in one transaction."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM results WHERE source = 'published'")
            for r in rows:
                validated(r)
                insert_result(conn, r)

    @property
    def name(self) -> str:
        """How a report names the database: the file's name, or the URL without its password."""
        return self.path if self.is_postgres else os.path.basename(self.path)

    def close(self) -> None:
        self.conn.close()

    # --- environments and runs -------------------------------------------
    def env_id(self, fingerprint: dict, key: str | None = None) -> int:
        """The id of a stored environment, storing it first if new.  ``key`` is what makes two
        fingerprints the same environment (measure.env.fingerprint_hash leaves out the volatile
        fields); without one, the whole fingerprint is the key."""
        from gpuarena.store.environment import fingerprint_ok

        try:
            fingerprint_ok(fingerprint)   # what environment() would not read back is not written
        except ValueError as exc:
            raise UserError(f"this machine's environment fingerprint cannot be stored "
                            f"({str(exc).splitlines()[0][:200]}); nothing was measured") from None
        fingerprint = redact_tree(fingerprint)   # a server's URL with a password is never stored
        blob = json.dumps(fingerprint, sort_keys=True, default=str)
        h = key or hashlib.sha256(blob.encode()).hexdigest()[:16]
        with self.transaction():
            row = self.conn.execute("SELECT id FROM environments WHERE hash=?", (h,)).fetchone()
            if row:
                return row[0]
            cur = self.conn.execute(
                "INSERT INTO environments(hash, fingerprint, created_at) VALUES (?,?,?)",
                (h, json.dumps(fingerprint, default=str), now()))
            return cur.lastrowid

    def environment(self, env_id: int) -> dict | None:
        """A stored fingerprint; None if there is none or it fails the typed Fingerprint
        (edited by hand): the report then says unknown for that environment."""
        from gpuarena.store.environment import fingerprint_ok

        row = self.conn.execute("SELECT fingerprint FROM environments WHERE id=?", (env_id,)).fetchone()
        try:
            return fingerprint_ok(json.loads(row[0])) if row else None
        except (ValueError, TypeError, RecursionError):
            return None

    def create_run(self, suite: str, device: str, plan: list[dict], env_id: int | None,
                   argv: list[str] | None = None, run_id: str | None = None) -> str:
        run_id = run_id or new_run_id()
        with self.transaction():
            self.conn.execute(
                "INSERT INTO runs(id, created_at, suite, device, env_id, plan, argv) VALUES (?,?,?,?,?,?,?)",
                (run_id, now(), suite, device, env_id, json.dumps(redact_tree(plan)),
                 json.dumps([redact(a) for a in argv or []])))
        return run_id

    def run(self, run_id: str) -> dict:
        row = self.conn.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            ids = [r[0] for r in self.conn.execute("SELECT id FROM runs ORDER BY created_at DESC LIMIT 5")]
            raise UserError(f"no run {run_id!r} in {self.path}" + (f"; latest: {', '.join(ids)}" if ids else ""))
        d = dict(row)
        d["status"] = _status(d.get("status"), d.get("owner"))
        try:
            d["plan"] = json.loads(d["plan"])
        except (ValueError, TypeError, RecursionError):
            raise UserError(f"run {run_id}: its stored plan is not JSON (edited by hand?); "
                            "start a new run instead") from None
        if not isinstance(d["plan"], list) or not all(isinstance(c, dict) for c in d["plan"]):
            raise UserError(f"run {run_id}: its stored plan is not a list of cases; start a new run instead")
        return d

    def runs(self) -> list[dict]:
        rows = self.conn.execute(
            "SELECT r.id, r.created_at, r.suite, r.device, r.status, r.owner, COUNT(x.id) AS results "
            "FROM runs r LEFT JOIN results x ON x.run_id = r.id GROUP BY r.id ORDER BY r.created_at").fetchall()
        out = []
        for r in rows:
            d = dict(r)
            d["status"] = _status(d["status"], d.pop("owner"))
            out.append(d)
        return out

    def set_run_status(self, run_id: str, status: str) -> None:
        with self.transaction():
            self.conn.execute("UPDATE runs SET status=? WHERE id=?", (status, run_id))

    def done_keys(self, run_id: str) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT case_key FROM results WHERE run_id=?", (run_id,))}

    def latest_run_id(self) -> str | None:
        row = self.conn.execute("SELECT id FROM runs ORDER BY created_at DESC, rowid DESC LIMIT 1").fetchone()
        return row[0] if row else None

    # --- the run lock: one process measures a run at a time (--resume) ----------
    def claim_run(self, run_id: str) -> None:
        """Make this process the run's owner; UserError if a live process owns it."""
        me = lock_owner()
        with self.transaction():
            row = self.conn.execute("SELECT owner, status FROM runs WHERE id=?", (run_id,)).fetchone()
            holder = live_lock_owner(row["owner"], row["status"]) if row else None
            if holder:
                raise UserError(f"run {run_id} is being measured by process {holder} now; "
                                "wait for it to end (or stop it) before resuming")
            self.conn.execute("UPDATE runs SET owner=?, status='running' WHERE id=?", (json.dumps(me), run_id))

    def release_run(self, run_id: str, status: str) -> None:
        with self.transaction():
            self.conn.execute("UPDATE runs SET status=?, owner=NULL WHERE id=?", (status, run_id))

    # --- results ------------------------------------------------------------
    def add_result(self, result: dict) -> int:
        """Insert one result (a dict in the shape results() returns) and commit at once;
        it is a new result, so it gets a new global identity (uid).  A result that results()
        would not read back is refused here (ResultRefused), never written to vanish later."""
        result = {**result, "uid": None}
        validated(result)
        deadline = time.monotonic() + self.timeout_s   # the retries share one bound, the store's timeout
        for attempt in range(5):
            try:
                with self.transaction():
                    return insert_result(self.conn, result)
            except sqlite3.OperationalError as exc:  # locked (a busy snapshot): back off, within the bound
                if "locked" not in str(exc) or attempt == 4 or time.monotonic() >= deadline:
                    raise
                time.sleep(min(0.5 * (attempt + 1), max(0.0, deadline - time.monotonic())))
        raise AssertionError("unreachable")

    def results(self, run_ids: Iterable[str] | None = None, workload: str | None = None,
                source: str | None = None, status: str | None = None) -> list[Result]:
        """Stored results, oldest first; a row that fails the typed Result (written by an older
        gpuarena, or edited by hand) is skipped and noted in self.skipped, never an error for the rest.

        The table is read and validated once per Store and kept until this Store writes: a
        report asks for rows dozens of times, and 20,000 rows validated each time would take
        minutes.  The typed rows are frozen, so every call shares them."""
        return select(self._all_rows(), run_ids, workload, source, status)

    def _all_rows(self) -> list[Result]:
        if self._rows is None:
            rows = []
            for row in self.conn.execute("SELECT * FROM results ORDER BY id"):
                try:
                    r = validated(row_to_result(row), as_stored=True)
                except ResultRefused as exc:
                    self.skipped.append((row["id"], str(exc)[:200]))
                    continue
                except (ValueError, TypeError, RecursionError) as exc:
                    self.skipped.append((row["id"], f"unreadable JSON ({exc.__class__.__name__})"))
                    continue
                if r.undeclared:     # a plugin's figures, or a key an older gpuarena wrote: kept
                    self.undeclared.append((r.id, r.workload, r.undeclared))
                rows.append(r)
            self._rows = rows
        return self._rows
