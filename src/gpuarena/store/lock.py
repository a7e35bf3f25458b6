"""The write lock of the store: BEGIN IMMEDIATE transactions (and PostgreSQL's database-wide
lock), and which live process owns a run being measured (--resume)."""

from __future__ import annotations

import json
import os
import sqlite3

from gpuarena.errors import UserError
from gpuarena.store import postgres


def lock_owner() -> dict:
    import socket

    import psutil

    return {"pid": os.getpid(), "host": socket.gethostname(), "started": psutil.Process().create_time()}


def live_lock_owner(owner: str | None, status: str) -> int | None:
    """The pid of the process that owns a run, if it still runs (same pid and start time)."""
    import socket

    import psutil

    if not owner or status != "running":
        return None
    try:
        o = json.loads(owner)
        if o.get("host") != socket.gethostname():
            return int(o["pid"])  # another machine's process: cannot tell, so it holds the run
        p = psutil.Process(int(o["pid"]))
        if abs(p.create_time() - float(o["started"])) < 1 and p.status() != psutil.STATUS_ZOMBIE:
            return int(o["pid"])
    except (psutil.Error, ValueError, TypeError, KeyError):
        pass
    return None


class DatabaseLocked(UserError, sqlite3.OperationalError):
    """A writer waited past the busy timeout.  Still an OperationalError (add_result
    backs off and retries it); a UserError once it reaches the CLI: one line, exit 2."""


class LockTx:
    """BEGIN IMMEDIATE ... COMMIT: takes the write lock up front, so writers queue instead of deadlocking."""

    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        try:
            if isinstance(self.conn, postgres.Connection):
                _begin_postgres(self.conn)
            else:
                self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc):
                raise
            raise DatabaseLocked("another process kept the database locked past the busy timeout; "
                                 "try again when it is done") from None
        return self.conn

    def __exit__(self, exc_type, *rest):
        if not exc_type:
            self.conn.execute("COMMIT")
            return False
        try:   # the error that ended the transaction is the one to tell, not the rollback's own
            self.conn.execute("ROLLBACK")
        except sqlite3.DatabaseError:
            pass
        return False


def _begin_postgres(conn) -> None:
    """BEGIN and the database-wide write lock; a lock past the timeout leaves no transaction open."""
    try:
        conn.begin()
    except sqlite3.OperationalError:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.DatabaseError:
            pass
        raise
