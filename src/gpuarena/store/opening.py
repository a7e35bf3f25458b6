"""Opening a database file: read-only for the commands that read, checked before
anything is changed for the commands that write.

A reading command never changes the file (no tables created, no WAL switch,
no journal beside a device); a writing command first makes sure the file is a
regular file it may write, is gpuarena's (or empty), is not from a newer
gpuarena and passes SQLite's integrity check, and only then switches it to
WAL and migrates it.  Every refusal is one UserError line.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from urllib.parse import quote

from gpuarena.errors import UserError
from gpuarena.store.migrations import MIGRATIONS
from gpuarena.store.postgres import is_url

TABLES = ("environments", "runs", "results")


def check_path(path: str, must_exist: bool) -> bool:
    """True if a file is there; UserError for a folder, a device, a missing folder or a bad name.
    A PostgreSQL URL is checked when it is opened (store/postgres.py)."""
    if is_url(path):
        return True
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        why = "the path is too long" if exc.errno == errno.ENAMETOOLONG else exc.strerror
        raise UserError(f"database {path}: {why}") from None
    if st is None:
        if must_exist:
            raise UserError(f"no database at {path} (run `gpuarena run` first, or pass --db)")
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise UserError(f"database folder {parent} does not exist")
        return False
    if not stat.S_ISREG(st.st_mode):
        raise UserError(f"database {path}: not a regular file")
    return True


def _check_schema(conn, path: str) -> int:
    """The file's schema version, refusing a newer gpuarena's and a foreign SQLite file.  The version
    and the tables are read in one transaction: between two autocommit reads another process's first
    migration could commit, and a new gpuarena database would look like a foreign file (seen with eight
    writers starting on an empty file)."""
    conn.execute("BEGIN")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.execute("COMMIT")
    if version > len(MIGRATIONS):
        raise UserError(f"{path}: schema version {version} is newer than this gpuarena "
                        f"({len(MIGRATIONS)}); upgrade gpuarena")
    if version == 0 and names:
        raise UserError(f"{path}: not a gpuarena database (an SQLite file with other tables); "
                        "nothing was changed")
    if version > 0 and not set(TABLES) <= names:
        raise UserError(f"{path}: not a gpuarena database (schema version {version} without "
                        "gpuarena's tables); nothing was changed")
    return version


def sqlite_error(path: str, exc: Exception, timeout_s: float = 0) -> UserError:
    msg = str(exc)
    if msg.startswith("postgresql:"):   # store/postgres.py's errors: the server's own first line
        return UserError(f"{path}: {msg}")
    if "locked" in msg:
        return UserError(f"{path}: another process kept the database locked for {timeout_s:g} s; "
                         "try again when it is done")
    if "malformed" in msg or "corrupt" in msg or "Could not decode" in msg:
        return UserError(f"{path}: the database file is damaged ({msg}); nothing was written. "
                         "Restore a copy, or export what `sqlite3 .recover` gets back")
    if "readonly" in msg or "read-only" in msg:
        return UserError(f"{path}: the database cannot be written ({msg})")
    if "disk is full" in msg or "disk I/O" in msg:
        return UserError(f"{path}: {msg}")
    return UserError(f"{path}: not a gpuarena database ({msg})")


def open_readonly(path: str) -> sqlite3.Connection:
    """A read-only connection; the file is not modified, nor anything created beside it."""
    check_path(path, must_exist=True)
    if os.path.getsize(path) == 0:    # what `touch` or an interrupted first run leaves: no results yet
        raise UserError(f"no gpuarena results in {path} yet (an empty file; `gpuarena run --db {path}` fills it)")
    uri = "file:" + quote(os.path.abspath(path))
    last = None
    # mode=ro needs the -shm of a WAL file; on a read-only filesystem only immutable=1 reads it
    for opts in ("?mode=ro", "?mode=ro&immutable=1"):
        try:
            conn = sqlite3.connect(uri + opts, uri=True, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA query_only = ON")
            _check_schema(conn, path)
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return conn
        except UserError:
            conn.close()
            raise
        except sqlite3.DatabaseError as exc:
            last = exc
            conn.close()
            if "unable to open" not in str(exc) and "readonly" not in str(exc):
                break
    raise sqlite_error(path, last) from None


def _refuse_read_only(path: str) -> None:
    """The checks that refuse a file (a newer gpuarena's, a foreign one, a damaged one), made through a
    read-only connection: closing a writable connection on a WAL file checkpoints it, so a refusal
    made through one would still change the file it refused."""
    uri = "file:" + quote(os.path.abspath(path)) + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.DatabaseError:
        return        # the writable connection says why
    try:
        conn.execute("PRAGMA query_only = ON")
        _check_schema(conn, path)
        bad = [r[0] for r in conn.execute("PRAGMA quick_check(3)")]
        if bad != ["ok"]:
            raise UserError(f"{path}: the database file is damaged ({bad[0][:120]}); nothing was "
                            "written. Restore a copy, or export what `sqlite3 .recover` gets back")
    except sqlite3.DatabaseError as exc:
        if "unable to open" in str(exc) or "readonly" in str(exc):
            return    # a WAL file whose -shm this process cannot make read-only: the writable path checks
        raise sqlite_error(path, exc) from None
    finally:
        conn.close()


def open_writable(path: str, timeout_s: float) -> sqlite3.Connection:
    """A connection for writing, after the checks in the module docstring; then WAL."""
    exists = check_path(path, must_exist=False)
    folder = os.path.dirname(os.path.abspath(path))
    if exists and not os.access(path, os.W_OK):
        raise UserError(f"{path}: the database cannot be written (read-only or immutable file)")
    if not os.access(folder, os.W_OK):
        raise UserError(f"{path}: the database folder {folder} cannot be written")
    if exists and os.path.getsize(path) > 0:
        _refuse_read_only(path)   # a file refused is never changed: a writable connection's close checkpoints
    try:
        conn = sqlite3.connect(path, timeout=timeout_s, isolation_level=None)
    except sqlite3.DatabaseError as exc:
        raise sqlite_error(path, exc, timeout_s) from None
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
        _check_schema(conn, path)      # again: another process may have changed it meanwhile
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn
    except UserError:
        conn.close()
        raise
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise sqlite_error(path, exc, timeout_s) from None
