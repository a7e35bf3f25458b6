"""How an imported bundle's rows meet the stored ones (store/bundle.py's import_bundle): a result's
identity is its uid and what it measured, an environment's is its fingerprint (its hash is only the
bundle's word), and a clash refuses the bundle whole."""

from __future__ import annotations

import hashlib
import json

from gpuarena.errors import UserError
from gpuarena.redact import redact_tree
from gpuarena.store.rows import now


_SAME = ("workload", "variant", "params", "size", "gpus", "device_name", "status", "throughput_median", "samples")


def measured_content(d: dict) -> str:
    """What a result measured: two rows with one uid must agree on it (a re-export changes its
    source, run and origin, never its figures)."""
    return json.dumps([d.get(k) for k in _SAME], sort_keys=True, default=str)


def existing(conn, uids: list[str]) -> dict[str, tuple[int, str]]:
    """uid -> (id, content) of those of uids the database holds: indexed look-ups, 500 at a time."""
    found: dict[str, tuple[int, str]] = {}
    for i in range(0, len(uids), 500):
        chunk = uids[i:i + 500]
        for row in conn.execute(f"SELECT id, uid, {', '.join(_SAME)} FROM results "
                                f"WHERE uid IN ({', '.join('?' * len(chunk))})", chunk):
            d = dict(zip(("id", "uid", *_SAME), row))
            for k in ("params", "samples"):
                d[k] = json.loads(d[k]) if d[k] is not None else None
            found[d["uid"]] = (d["id"], measured_content(d))
    return found


def stored_environment(conn, e) -> int:
    """The stored environment of a bundle's one.  Its hash is the bundle's word, not a proof: a stored
    environment with that hash but another fingerprint is another machine's (a bundle could otherwise
    attach its results to it), so the bundle's fingerprint is kept apart, under a hash of its content."""
    fingerprint = redact_tree(e.fingerprint)
    h = e.hash
    for _ in range(2):
        row = conn.execute("SELECT id, fingerprint FROM environments WHERE hash=?", (h,)).fetchone()
        if row is None:
            return conn.execute("INSERT INTO environments(hash, fingerprint, created_at) VALUES (?,?,?)",
                                (h, json.dumps(fingerprint), now())).lastrowid
        try:
            same = json.loads(row[1]) == fingerprint
        except (ValueError, TypeError, RecursionError):
            same = False
        if same:
            return row[0]
        h = hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]
    raise UserError(f"environment {e.hash[:40]}: stored twice with other fingerprints; nothing imported")


def clash(path: str, what: str) -> UserError:
    return UserError(f"{path}: refused, nothing imported: {what}; a uid names one measurement "
                     "(was the bundle edited, or two bundles merged by hand?)")
