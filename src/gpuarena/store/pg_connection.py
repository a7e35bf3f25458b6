"""A psycopg 3 connection with the few sqlite3 calls the Store uses (execute with ``?``
placeholders, fetchone, iteration, lastrowid, rows read by index or by name), so the Store,
the bundle import and the tests run the same statements on SQLite and PostgreSQL
(store/postgres.py: the URL, the schema and its dialect).

- psycopg's errors are raised as the sqlite3 module's classes (OperationalError
  for a lost connection or a lock past the timeout, IntegrityError, ...), so
  each place that handles a database error handles both back ends; a message is
  passed through gpuarena/redact.py with the URL's own passwords;
- every wait is bounded by the store's timeout T (GPUARENA_DB_TIMEOUT_S): the
  server ends a lock wait after T (lock_timeout), any statement after T + 1 s
  (statement_timeout) and a transaction left idle as long; TCP keepalives and
  tcp_user_timeout notice a host that vanished; and a server that stops
  answering altogether (stopped, frozen, behind a dead link) is cut off by the
  client T + 3 s into a statement, its socket shut, so the caller gets an
  OperationalError instead of a hang.  A broken connection is opened again
  (once, within connect_timeout) by the next statement; a Ctrl-C or SIGTERM
  during a statement ends it at once (interrupt()).
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sqlite3
import threading
import time

from gpuarena.errors import UserError
from gpuarena.redact import passwords
from gpuarena.redact import redact as _redact

LOCK_KEY = 0x67707561  # "gpua": the advisory lock every write transaction takes


def _libpq_url(url: str) -> str:
    """The URL as libpq takes it: the scheme in lower case, postgres:// as postgresql://."""
    scheme, sep, rest = url.strip().partition("://")
    return "postgresql://" + rest if sep and scheme.lower() in ("postgresql", "postgres") else url


def _statement(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (a literal % doubled); rowid as ctid."""
    return re.sub(r"\browid\b", "ctid", sql.replace("%", "%%").replace("?", "%s"))


class Row(tuple):
    """A row read by index (row[0]) or by column name (row["id"]), and dict(row)-able, like sqlite3.Row."""

    def __new__(cls, values, names):
        row = super().__new__(cls, values)
        row._names = names
        return row

    def keys(self):
        return list(self._names)

    def __getitem__(self, key):
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names.index(key))
        return tuple.__getitem__(self, key)


def _row_factory(cursor):
    names = [d.name for d in cursor.description or []]
    return lambda values: Row(values, names)


def as_sqlite_error(exc: Exception, known: tuple[str, ...] = ()) -> Exception:
    """A psycopg error as the sqlite3 class the Store and the CLI already handle."""
    import psycopg

    first = _redact((str(exc).strip().splitlines() or [exc.__class__.__name__])[0], known)[:300]
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return sqlite3.OperationalError(f"postgresql: permission denied ({first})")
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return sqlite3.OperationalError(f"database is locked ({first})")
    if isinstance(exc, psycopg.IntegrityError):
        return sqlite3.IntegrityError(first)
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        return sqlite3.OperationalError(f"postgresql: {first}")
    return sqlite3.DatabaseError(f"postgresql: {first}")


class Cursor:
    def __init__(self, cur, rows=None, lastrowid=None):
        self._cur, self._rows, self.lastrowid = cur, rows, lastrowid

    def fetchone(self):
        if self._rows is not None:
            return self._rows.pop(0) if self._rows else None
        return self._cur.fetchone()

    def fetchall(self):
        if self._rows is not None:
            rows, self._rows = self._rows, []
            return rows
        return self._cur.fetchall()

    def __iter__(self):
        return iter(self.fetchall())


_INSERT_WITH_ID = re.compile(r"^\s*INSERT INTO (results|environments)\b(?!.*\bRETURNING\b)", re.I | re.S)


_ACTIVE: list = []    # the Connection inside a statement now (interrupt() ends it)
logging.getLogger("psycopg").addHandler(logging.NullHandler())   # its warnings are ours to say
logging.getLogger("psycopg").propagate = False


def timeout_default() -> float:
    """GPUARENA_DB_TIMEOUT_S: how long any one database wait may last (default 60 s)."""
    raw = os.environ.get("GPUARENA_DB_TIMEOUT_S", "").strip()
    if not raw:
        return 60.0
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0.1 <= value <= 86400:
        raise UserError(f"GPUARENA_DB_TIMEOUT_S={raw[:40]!r}: expected seconds between 0.1 and 86400")
    return value


class _Watchdog:
    """One thread per connection, started on its first statement, that calls ``abort("timeout")`` when
    a statement runs past its deadline (a thread per statement would cost an import of 50,000 rows
    50,000 thread starts)."""

    def __init__(self, abort):
        self._abort, self._deadline, self._thread = abort, None, None
        self._cond = threading.Condition()

    def arm(self, seconds: float) -> None:
        with self._cond:
            self._deadline = time.monotonic() + seconds
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True, name="gpuarena-db-watchdog")
                self._thread.start()
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline = None

    def _run(self) -> None:
        with self._cond:
            while True:
                if self._deadline is None:
                    self._cond.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                self._deadline = None
                self._abort("timeout")


class Connection:
    """A psycopg connection with the sqlite3 calls the Store uses (autocommit; BEGIN/COMMIT explicit),
    each statement bounded (the module docstring)."""

    def __init__(self, url: str, lock_timeout_s: float, readonly: bool):
        self._url, self._readonly = url, readonly
        self._known = tuple(passwords(url))
        self.lock_timeout_s = lock_timeout_s
        self.bound_s = lock_timeout_s + 3.0    # past the server's own statement_timeout (T + 1 s)
        self._aborted: str | None = None
        self._watchdog = _Watchdog(self._abort)
        self._conn = self._open()

    def _open(self):
        import psycopg

        t = self.lock_timeout_s
        ms = max(1, int(t * 1000))   # a lock wait ends at T as "locked", any statement at T + 1 s
        options = f"-c statement_timeout={ms + 1000} -c idle_in_transaction_session_timeout={ms + 1000}"
        if self._readonly:
            options += " -c default_transaction_read_only=on"
        return psycopg.connect(_libpq_url(self._url), autocommit=True, connect_timeout=max(2, int(min(t, 30) + 0.999)),
                               options=options, keepalives=1, keepalives_idle=max(1, int(min(t, 60))),
                               keepalives_interval=max(1, int(min(t, 60) / 3)), keepalives_count=3,
                               tcp_user_timeout=ms)

    def _abort(self, why: str) -> None:
        """Shut the socket under a statement that waits (from the watchdog thread or a signal handler)."""
        self._aborted = why
        try:
            fd = self._conn.pgconn.socket
            with socket.socket(fileno=os.dup(fd)) as sock:
                sock.shutdown(socket.SHUT_RDWR)
        except Exception:  # noqa: BLE001 - already closed: nothing waits on it
            pass

    def _ensure_open(self) -> None:
        """A connection a fault broke is opened again (once per statement, bounded by connect_timeout)."""
        import psycopg

        if not (self._conn.closed or self._conn.broken):
            return
        try:
            self._conn.close()
            self._conn = self._open()
        except psycopg.Error as exc:
            raise sqlite3.OperationalError(f"postgresql: the server cannot be reached again "
                                           f"({_redact(' '.join(str(exc).split()), self._known)[:200]})") from None

    def execute(self, sql: str, args=()):
        import psycopg

        returning = bool(_INSERT_WITH_ID.match(sql))
        text = _statement(sql) + (" RETURNING id" if returning else "")
        self._ensure_open()
        self._aborted = None
        _ACTIVE.append(self)
        self._watchdog.arm(self.bound_s)
        try:
            cur = self._conn.cursor(row_factory=_row_factory)
            cur.execute(text, list(args) if args else None)
            if returning:
                return Cursor(cur, [], cur.fetchone()[0])
            return Cursor(cur)
        except psycopg.Error as exc:
            if self._aborted == "interrupt":
                raise KeyboardInterrupt from None
            if self._aborted == "timeout":
                raise sqlite3.OperationalError(f"postgresql: the server did not answer within {self.bound_s:g} s "
                                               "(stopped, overloaded or unreachable)") from None
            raise as_sqlite_error(exc, self._known) from None
        finally:
            self._watchdog.disarm()
            _ACTIVE.remove(self)

    def begin(self) -> None:
        """BEGIN, then the database-wide write lock (waits at most lock_timeout_s)."""
        self.execute("BEGIN")
        self.execute(f"SET LOCAL lock_timeout = '{int(self.lock_timeout_s * 1000)}ms'")
        self.execute(f"SELECT pg_advisory_xact_lock({LOCK_KEY})")

    def close(self) -> None:
        self._conn.close()


def interrupt() -> bool:
    """From a signal handler: end the statement in progress at once (it raises KeyboardInterrupt
    itself, without psycopg's cancel request, which waits on a server that may not answer).
    False when no statement runs (the handler raises as usual)."""
    if not _ACTIVE:
        return False
    _ACTIVE[-1]._abort("interrupt")
    return True


def connect(url: str, timeout_s: float, readonly: bool) -> Connection:
    """A connection to url; UserError (one line) if psycopg is missing or the server refuses."""
    shown = _redact(url, passwords(url))
    try:
        import psycopg
    except ImportError:
        raise UserError(f"--db {shown}: PostgreSQL needs psycopg; pip install 'gpuarena[postgres]'") from None
    try:
        return Connection(url, timeout_s, readonly)
    except psycopg.Error as exc:
        why = " ".join(str(exc).replace("connection failed:", "").split())
        why = _redact(why, passwords(url))[:300] or exc.__class__.__name__
        raise UserError(f"{shown}: cannot connect to PostgreSQL ({why})") from None
    except ValueError as exc:  # a URL psycopg cannot parse
        raise UserError(f"{shown}: not a PostgreSQL URL ({_redact(exc, passwords(url))[:200]})") from None
