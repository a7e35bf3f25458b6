"""Export and import bundles: results with their environments, so results from
many machines meet in one database.

A bundle is JSON::

    {"format": "gpuarena-bundle", "version": 1, "created_at": "...",
     "environments": [{"id": 3, "hash": "...", "fingerprint": {...}}],
     "results": [{...result dict as `gpuarena results --format json`...}],
     "doctor": {...},            # optional: `gpuarena doctor`'s level and acceptance evidence
     "sha256": "..."}            # optional: of the rest of the file (content_hash); checked on read

Import validates the whole file first (format and version, required fields,
types, ranges, statuses, string lengths, a size cap) with pydantic and refuses
a bad bundle whole with one line; then it writes everything in one
transaction.  Every result carries a global identity (uid) that export and
import keep, so a result that comes back (A -> B -> A, or a bundle imported
twice) is recognised by an indexed look-up and not stored again.  Imported
rows get source='imported', a new import run, and keep their original run in
extra.origin_run_id.  Strings are stored as text, never evaluated.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gpuarena import safeio, strictjson
from gpuarena.errors import UserError, pydantic_error_line
from gpuarena.redact import redact, redact_tree
from gpuarena.safeio import printable
from gpuarena.store.bundle_rows import clash, existing, measured_content, stored_environment
from gpuarena.store.db import new_run_id
from gpuarena.store.checks import finite
from gpuarena.store.rows import ResultRefused, insert_result, legacy_uid, now, validated
from gpuarena.store.environment import fingerprint_ok
from gpuarena.store.result import Result

FORMAT = "gpuarena-bundle"
VERSION = 1
MAX_BYTES = 256 * 1024 * 1024       # a bundle larger than this is refused before parsing
MAX_DEPTH = 16                      # bundle > results > result > extra > ... : deeper is hostile
Str = lambda n: Field(None, max_length=n)  # noqa: E731


class BundleEnv(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: int
    hash: str = Field(min_length=1, max_length=128, pattern=r"^[0-9a-f]+$")
    fingerprint: dict[str, Any]

    @field_validator("fingerprint")
    @classmethod
    def _fp(cls, v):
        return fingerprint_ok(v)


class Bundle(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal["gpuarena-bundle"]
    version: int
    created_at: Optional[str] = Str(40)
    environments: list[BundleEnv] = Field(max_length=100_000)
    results: list[Result] = Field(max_length=10_000_000)
    # `gpuarena doctor`'s evidence: its level and the acceptance checks' raw outcomes (runner/acceptance.py);
    # `fleet` judges them again with its own code, never trusting a verdict written in the file
    doctor: Optional[dict[str, Any]] = None
    sha256: Optional[str] = Field(None, pattern=r"^[0-9a-f]{64}$")   # of the rest (content_hash)

    @field_validator("version")
    @classmethod
    def _version(cls, v):
        if v != VERSION:
            raise ValueError(f"bundle version {v} is not supported by this gpuarena (reads version {VERSION})")
        return v


# --- export --------------------------------------------------------------------

def export(store, run_ids: list[str] | None = None) -> dict:
    """The bundle (a dict) of the given runs' results, or of every measured and imported result."""
    for rid in run_ids or []:
        store.run(rid)                       # UserError for an unknown run
    results = [dict(r.row()) for r in store.results(run_ids or None) if r.source in ("measured", "imported")]
    envs = []
    for eid in sorted({r["env_id"] for r in results if r.get("env_id") is not None}):
        row = store.conn.execute("SELECT id, hash, fingerprint FROM environments WHERE id=?", (eid,)).fetchone()
        envs.append({"id": row[0], "hash": row[1], "fingerprint": redact_tree(json.loads(row[2]))})
    for r in results:
        r["extra"] = {k: v for k, v in (r.get("extra") or {}).items() if k not in ("traceback", "stderr_tail")}
        r["uid"] = r.get("uid") or legacy_uid(r)
    return {"format": FORMAT, "version": VERSION, "created_at": now(), "environments": envs,
            "results": [finite(redact_tree(r)) for r in results]}


def content_hash(bundle: dict) -> str:
    """SHA-256 of the bundle's canonical JSON without its own ``sha256``: a renter hands the file and the
    hash to the provider, and a change to either shows (tamper-evident, not signed)."""
    body = {k: v for k, v in bundle.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"), default=str,
                                     allow_nan=False).encode()).hexdigest()


def write(bundle: dict, path: str, protect: tuple[str, ...] = ()) -> None:
    """The bundle as JSON at path, atomically (safeio.write_text: never over the database)."""
    safeio.write_text(path, json.dumps(bundle, indent=1, default=str, allow_nan=False), "-o", protect)


# --- import --------------------------------------------------------------------

def _validated(data: dict, path: str) -> Bundle:
    """The Bundle of a parsed file, checked shape first and then item by item, stopping at the first
    bad item: pydantic on the whole list would build one error (with a copy of its input) per bad
    item, gigabytes for a few megabytes of hostile items, before the one line is said."""
    refused = f"{path}: refused, nothing imported"
    lists = {}
    for name, most in (("environments", Bundle.model_fields["environments"].metadata[0].max_length),
                       ("results", Bundle.model_fields["results"].metadata[0].max_length)):
        items = data.get(name)
        if not isinstance(items, list):
            raise UserError(f"{refused}: {name}: expected a list, not {type(items).__name__}")
        if len(items) > most:
            raise UserError(f"{refused}: {name}: {len(items)} items, over the {most} limit")
        lists[name] = items
    try:
        head = Bundle.model_validate({**data, "environments": [], "results": []})
    except ValidationError as exc:
        raise UserError(f"{refused}: {pydantic_error_line(exc)[:400]}") from None
    parsed = {}
    for name, model in (("environments", BundleEnv), ("results", Result)):
        out = parsed[name] = []
        for i, item in enumerate(lists[name]):
            if not isinstance(item, dict):
                raise UserError(f"{refused}: {name}.{i}: expected an object, not {type(item).__name__}")
            try:
                out.append(model.model_validate(item))
            except ValidationError as exc:
                raise UserError(f"{refused}: {name}.{i}.{pydantic_error_line(exc)[:400]}") from None
    return head.model_copy(update=parsed)     # every other field (doctor, sha256 ...) as validated


def read(path: str) -> Bundle:
    """Parse and validate a bundle file; UserError (one line) for anything wrong."""
    text = safeio.read_text(path, path, MAX_BYTES, kind="bundle")
    try:
        data = strictjson.loads(text)
    except ValueError as exc:
        raise UserError(f"{path}: not a JSON bundle ({str(exc).splitlines()[0][:200]})") from None
    except RecursionError:  # "[[[[..." nested past Python's stack: hostile, not a bundle
        raise UserError(f"{path}: not a JSON bundle (nested too deeply)") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"{path}: not a gpuarena bundle (expected \"format\": \"{FORMAT}\")")
    if safeio.depth(data, MAX_DEPTH) > MAX_DEPTH:
        raise UserError(f"{path}: refused, nothing imported: nested deeper than {MAX_DEPTH} levels")
    bundle = _validated(data, path)
    if bundle.sha256 is not None and bundle.sha256 != content_hash(data):
        raise UserError(f"{path}: refused, nothing imported: its sha256 does not match its content "
                        "(the file was changed after it was written)")
    env_ids = {e.id for e in bundle.environments}
    for i, r in enumerate(bundle.results):
        if r.env_id is not None and r.env_id not in env_ids:
            raise UserError(f"{path}: refused, nothing imported: results.{i}.env_id {r.env_id} "
                            "is not among the bundle's environments")
        if r.power_w_mean is not None and r.power_w_max is not None and r.power_w_mean > r.power_w_max + 0.5:
            raise UserError(f"{path}: refused, nothing imported: results.{i}.power_w_mean {r.power_w_mean:g} W "
                            f"is above the result's own power_w_max {r.power_w_max:g} W (a mean is never "
                            "above its largest sample)")
        if r.source == "published":
            raise UserError(f"{path}: refused, nothing imported: results.{i}.source: published rows come "
                            "from `gpuarena import --published`, not from a bundle")
    return bundle


def from_results(results: list[dict], path: str) -> Bundle:
    """A bundle of result dicts made here (an importer's), validated as any bundle is."""
    try:
        return Bundle.model_validate({"format": FORMAT, "version": VERSION, "environments": [], "results": results})
    except ValidationError as exc:
        raise UserError(f"{path}: refused, nothing imported: {pydantic_error_line(exc)[:400]}") from None


def check_params(bundle: Bundle, path: str, param_map) -> None:
    """Each result's params against its workload's declared ones (param_map(workload) -> {name: Param},
    or None for a workload this gpuarena does not know): a bad value is refused like a bad --set."""
    for i, r in enumerate(bundle.results):
        for name, value in _param_sets(r):
            pm = param_map(name)
            for k, v in (value or {}).items():
                if pm and k in pm:
                    try:
                        pm[k].parse(v)
                    except UserError as exc:
                        raise UserError(f"{path}: refused, nothing imported: results.{i}.params: {exc}") from None


def _param_sets(r: Result):
    yield r.workload, r.params
    inner, params = getattr(r.extra, "inner_workload", None), getattr(r.extra, "inner_params", None)   # ddp-train's
    if inner and params:
        yield inner, params


def insert_rows(conn, rows: list[dict]) -> None:
    """INSERT result dicts on an open transaction (the caller commits or rolls back)."""
    for r in rows:
        insert_result(conn, r)


def import_bundle(store, path: str, bundle: Bundle | None = None) -> dict:
    """Validate then write a bundle in one short transaction (everything is prepared first).

    Returns {"run_id": import run id or None, "imported": n, "skipped_duplicates": n, "environments": n}.
    A result already present (same uid: its global identity, kept through export and import) is skipped.
    """
    bundle = bundle or read(path)
    name = printable(redact(Path(path).name)).replace("\n", " ").replace("\t", " ")[:200]
    out = {"run_id": None, "imported": 0, "skipped_duplicates": 0, "environments": len(bundle.environments)}
    rows, seen = [], {}
    for i, r in enumerate(bundle.results):
        d = r.row()
        d["uid"] = d.get("uid") or legacy_uid(d)
        if d["uid"] in seen:
            first, content = seen[d["uid"]]
            if content != measured_content(d):
                raise clash(path, f"results.{i} and results.{first} share uid {d['uid'][:40]!r} "
                                   "but differ in what they measured")
            out["skipped_duplicates"] += 1
            continue
        seen[d["uid"]] = (i, measured_content(d))
        d["extra"] = {**d["extra"], "origin_run_id": d["run_id"], "origin_source": d["source"]}
        d["source"] = "imported"
        d["origin"] = f"bundle {name}"
        try:   # what the store would not read back is never written (a name with a control character)
            validated(d)
        except ResultRefused as exc:
            raise UserError(f"{redact(path)}: refused, nothing imported: results.{i}: {exc}") from None
        rows.append(d)
    run_id = new_run_id()
    statements = {d["uid"]: d for d in rows}
    with store.transaction() as conn:
        present = existing(conn, list(statements))
        for u, (rid, content) in present.items():
            if content != measured_content(statements[u]):
                raise clash(path, f"uid {u[:40]!r} is stored already (result {rid}) with other figures")
        todo = [d for u, d in statements.items() if u not in present]
        out["skipped_duplicates"] += len(rows) - len(todo)
        if not todo:
            return out
        env_map = {}
        for e in bundle.environments:
            env_map[e.id] = stored_environment(conn, e)
        conn.execute("INSERT INTO runs(id, created_at, suite, device, env_id, plan, argv, status) "
                     "VALUES (?,?,?,?,?,?,?,?)",
                     (run_id, now(), f"import:{name}"[:200], todo[0].get("device") or "imported",
                      None, "[]", json.dumps(["import", printable(redact(path))]), "complete"))
        for d in todo:
            d["run_id"] = run_id
            d["env_id"] = env_map.get(d["env_id"]) if d["env_id"] is not None else None
            insert_result(conn, d)
    out["run_id"], out["imported"] = run_id, len(todo)
    return out
