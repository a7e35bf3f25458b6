"""Measurements the database could not take (a full disk, a failing one): kept as
files so that `gpuarena run --resume` stores them once there is room again.

A measured case is minutes of device time; losing it because the disk filled
while its row was written would make the user pay for it twice.  The result is
written (atomically: temporary file, fsync, rename) beside the database, or in
the temporary folder if that fails too, and --resume reads it back first.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import tempfile

from gpuarena.errors import UserError
from gpuarena.safeio import read_json, write_text

MAX_KEPT_BYTES = 64 << 20   # a result with its telemetry and extra is well under this


def folders(db_path: str, run_id: str, kind: str = "pending") -> list[str]:
    """Where kept results go: "pending" (--resume stores them) or "refused" (the store would
    not take them: kept for the user, never read back by gpuarena).  Beside the database file; for a
    PostgreSQL URL, in the working folder (named after the database)."""
    from gpuarena.store.postgres import is_url

    if is_url(db_path):
        base = "pg-" + hashlib.sha256(db_path.encode()).hexdigest()[:12]
        home = os.getcwd()
    else:
        base, home = os.path.basename(db_path), os.path.dirname(os.path.abspath(db_path))
    return [os.path.join(home, f".gpuarena-{kind}-{base}", run_id),
            os.path.join(tempfile.gettempdir(), f"gpuarena-{kind}-{base}-{run_id}")]


def keep(db_path: str, run_id: str, result: dict, kind: str = "pending") -> str | None:
    """Write result where --resume looks (or, kind "refused", beside it); the path, or None
    if no folder would take it."""
    name = hashlib.sha256(str(result.get("case_key")).encode()).hexdigest()[:16] + ".json"
    text = json.dumps(result, default=str)
    for folder in folders(db_path, run_id, kind):
        try:
            os.makedirs(folder, exist_ok=True)
            return write_text(os.path.join(folder, name), text, "pending result")
        except (OSError, UserError):
            continue
    return None


class StoreFailed(Exception):
    """A case was measured but its row could not be written; the result is kept as a file."""

    def __init__(self, store, run_id: str, case, result: dict, exc: Exception):
        path = keep(store.path, run_id, result)
        where = (f"its result is kept in {path}; free space, then `gpuarena run --resume {run_id}` stores it"
                 if path else "and it could not be kept anywhere either: it will be measured again on --resume")
        super().__init__(f"{store.path}: could not store the result of {case.label()} ({exc}); {where}")


def refused(store, run_id: str, case, result: dict, why: str) -> str:
    """The one line for a measured result the store refused (rows.validated): where it is kept."""
    path = keep(store.path, run_id, result, "refused")
    where = f"it is kept in {path}" if path else "and it could not be kept in a file either"
    return f"the result of {case.label()} cannot be stored ({why}); {where}"


def _usable(result, run_id: str) -> bool:
    """A kept file is stored only if it is this run's and a valid Result (a file in /tmp is anyone's)."""
    from gpuarena.store.rows import ResultRefused, validated

    if not isinstance(result, dict) or result.get("run_id") != run_id:
        return False
    try:
        validated(result)
    except ResultRefused:
        return False
    return True


def store_pending(store, run_id: str, console=None) -> int:
    """Store the kept results of run_id (those not stored yet), then remove their files."""
    done = store.done_keys(run_id)
    stored = 0
    for folder in folders(store.path, run_id):
        for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
            try:   # a file in /tmp is anyone's: a FIFO or a 10 GB file there must not stop --resume
                result = read_json(path, path, MAX_KEPT_BYTES)
            except UserError:
                continue
            if _usable(result, run_id) and result["case_key"] not in done:
                store.add_result(result)
                done.add(result["case_key"])
                stored += 1
            os.unlink(path)
        try:
            os.rmdir(folder)
            os.rmdir(os.path.dirname(folder)) if folder.endswith(os.sep + run_id) else None
        except OSError:
            pass
    if stored and console is not None:
        console.print(f"stored {stored} result(s) kept from an earlier full disk", markup=False)
    return stored
