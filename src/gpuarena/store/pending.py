"""Measurements the database could not take (a full or failing disk, a store locked or a
PostgreSQL server that stopped answering past its timeout): kept as files so that
`gpuarena run --resume` stores them once the database takes writes again.

A measured case is minutes of device time; losing it because the store failed
while its row was written would make the user pay for it twice.  The result is
written (atomically: temporary file, fsync, rename) into a private folder: beside
the database (for a PostgreSQL URL, in the working folder), or this user's own
folder under the temporary folder if that fails too.  Every folder is made
owner-only (0700) and checked before it is written or read (a directory, not a
link, owned by this user, no access for others): a file another local user
planted is never read back.  --resume stores only results of the run's own
planned cases that are valid Results.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import stat
import tempfile

from gpuarena.errors import UserError
from gpuarena.safeio import read_json, write_text

MAX_KEPT_BYTES = 64 << 20   # a result with its telemetry and extra is well under this


def _places(db_path: str, run_id: str, kind: str) -> list[tuple[str, int]]:
    """(a folder for this run's kept results, how many of its last levels gpuarena makes private),
    in order of preference: beside the database, then this user's folder in the temporary folder."""
    from gpuarena.store.postgres import is_url

    if is_url(db_path):
        base = "pg-" + hashlib.sha256(db_path.encode()).hexdigest()[:12]
        home = os.getcwd()
    else:
        base, home = os.path.basename(db_path), os.path.dirname(os.path.abspath(db_path))
    mine = os.path.join(tempfile.gettempdir(), f"gpuarena-{os.geteuid()}")
    return [(os.path.join(home, f".gpuarena-{kind}-{base}", run_id), 2),
            (os.path.join(mine, f"{kind}-{base}", run_id), 3)]


def folders(db_path: str, run_id: str, kind: str = "pending") -> list[str]:
    """Where kept results of a run go: "pending" (--resume stores them) or "refused" (the store would
    not take them: kept for the user, never read back by gpuarena)."""
    return [folder for folder, _ in _places(db_path, run_id, kind)]


def private(folder: str) -> bool:
    """Whether folder is a directory (not a link) of this user that no one else may enter or write."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o077


def _make_private(path: str, levels: int) -> None:
    """Create the last ``levels`` parts of path owner-only, each checked; OSError if one is not private."""
    parts = [path]
    for _ in range(levels - 1):
        parts.insert(0, os.path.dirname(parts[0]))
    for p in parts:
        try:
            os.mkdir(p, 0o700)
        except FileExistsError:
            pass
        if not private(p):
            raise PermissionError(f"{p} is not a private folder of this user")


def _readable(folder: str, levels: int) -> bool:
    p = folder
    for _ in range(levels):
        if not private(p):
            return False
        p = os.path.dirname(p)
    return True


def keep(db_path: str, run_id: str, result: dict, kind: str = "pending") -> str | None:
    """Write result where --resume looks (or, kind "refused", beside it); the path, or None
    if no folder would take it."""
    name = hashlib.sha256(str(result.get("case_key")).encode()).hexdigest()[:16] + ".json"
    text = json.dumps(result, default=str)
    for folder, levels in _places(db_path, run_id, kind):
        try:
            _make_private(folder, levels)
            return write_text(os.path.join(folder, name), text, "pending result")
        except (OSError, UserError):
            continue
    return None


class StoreFailed(Exception):
    """A case was measured but its row could not be written; the result is kept as a file."""

    def __init__(self, store, run_id: str, case, result: dict, exc: Exception):
        path = keep(store.path, run_id, result)
        why = " ".join(str(exc).split())[:300]
        where = (f"its result is kept in {path}; when the database takes writes again, "
                 f"`gpuarena run --resume {run_id}` stores it" if path
                 else "and it could not be kept anywhere either: it will be measured again on --resume")
        super().__init__(f"{store.path}: could not store the result of {case.label()} ({why}); {where}")


def refused(store, run_id: str, case, result: dict, why: str) -> str:
    """The one line for a measured result the store refused (rows.validated): where it is kept."""
    path = keep(store.path, run_id, result, "refused")
    where = f"it is kept in {path}" if path else "and it could not be kept in a file either"
    return f"the result of {case.label()} cannot be stored ({why}); {where}"


def _usable(result, run_id: str, planned: set[str]) -> bool:
    """A kept file is stored only if it is this run's, of one of its planned cases, and a valid Result."""
    from gpuarena.store.rows import ResultRefused, validated

    if not isinstance(result, dict) or result.get("run_id") != run_id or result.get("case_key") not in planned:
        return False
    if result.get("source") != "measured":
        return False
    try:
        validated(result)
    except ResultRefused:
        return False
    return True


def store_pending(store, run_id: str, planned: set[str], console=None) -> int:
    """Store the kept results of run_id's planned cases (those not stored yet), then remove their files.
    A folder that is not private to this user is left alone, unread."""
    done = store.done_keys(run_id)
    stored = 0
    for folder, levels in _places(store.path, run_id, "pending"):
        if not _readable(folder, levels):
            continue
        for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
            try:   # a FIFO or a 10 GB file must not stop --resume
                result = read_json(path, path, MAX_KEPT_BYTES)
            except UserError:
                continue
            if _usable(result, run_id, planned) and result["case_key"] not in done:
                store.add_result(result)
                done.add(result["case_key"])
                stored += 1
            os.unlink(path)
        try:
            os.rmdir(folder)
            os.rmdir(os.path.dirname(folder))
        except OSError:
            pass
    if stored and console is not None:
        console.print(f"stored {stored} result(s) kept from an earlier store failure", markup=False)
    return stored
