"""Export and import bundles: results with their environments, so results from
many machines meet in one database.

A bundle is JSON::

    {"format": "gpuarena-bundle", "version": 1, "created_at": "...",
     "environments": [{"id": 3, "hash": "...", "fingerprint": {...}}],
     "results": [{...result dict as `gpuarena results --format json`...}]}

Import validates the whole file first (format and version, required fields,
types, ranges, statuses, string lengths, a size cap) with pydantic and refuses
a bad bundle whole with one line; then it writes everything in one
transaction.  Imported rows get source='imported', a new import run, and keep
their original run and id in extra.bundle_key, so importing a bundle twice
adds nothing the second time.  Strings are stored as text, never evaluated.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gpuarena.errors import UserError, pydantic_error_line
from gpuarena.store.db import JSON_COLUMNS, _RESULT_COLUMNS, _finite, new_run_id, now

FORMAT = "gpuarena-bundle"
VERSION = 1
MAX_BYTES = 256 * 1024 * 1024       # a bundle larger than this is refused before parsing
MAX_THROUGHPUT = 1e12               # items/s: far above anything a GPU does (absurd beyond)
MAX_SAMPLES = 100_000
Str = lambda n: Field(None, max_length=n)  # noqa: E731


def _finite_pos(x: float | None, what: str, cap: float = math.inf) -> float | None:
    if x is None:
        return x
    if not math.isfinite(x) or x < 0 or x > cap:
        raise ValueError(f"{what} {x!r} is not a finite number in [0, {cap:g}]")
    return x


class Summary(BaseModel):
    model_config = ConfigDict(extra="allow")
    n: int = Field(ge=1, le=MAX_SAMPLES)
    median: float
    mean: float

    @field_validator("median", "mean")
    @classmethod
    def _ok(cls, v):
        return _finite_pos(v, "summary value", MAX_THROUGHPUT)


class BundleResult(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: int = Field(ge=0)
    run_id: Optional[str] = Str(100)
    case_key: str = Field(min_length=1, max_length=2000)
    source: Literal["measured", "imported"]
    workload: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:+-]+$")
    workload_version: Optional[int] = Field(None, ge=0, le=1_000_000)
    code_hash: Optional[str] = Field(None, max_length=64, pattern=r"^[0-9a-f]*$")
    variant: str = Field(min_length=1, max_length=200)
    params: dict[str, Any]
    size: str = Field("full", max_length=20)
    gpus: int = Field(1, ge=1, le=100_000)
    device: Optional[str] = Str(50)
    device_name: Optional[str] = Str(200)
    env_id: Optional[int] = None
    status: Literal["ok", "oom", "timeout", "crashed", "failed", "skipped"]
    error: Optional[str] = Str(5000)
    unit: Optional[str] = Str(50)
    precision: Optional[str] = Str(50)
    throughput_median: Optional[float] = None
    throughput: Optional[Summary] = None
    latency: Optional[dict[str, Any]] = None
    samples: Optional[list[float]] = Field(None, max_length=MAX_SAMPLES)
    items_per_step: Optional[float] = None
    flops_per_item: Optional[float] = None
    tflops: Optional[float] = None
    peak_memory_bytes: Optional[int] = Field(None, ge=0, le=1 << 50)
    compile_s: Optional[float] = None
    power_w_mean: Optional[float] = None
    power_w_max: Optional[float] = None
    energy_j_per_item: Optional[float] = None
    energy_source: Optional[str] = Str(50)
    temp_c_max: Optional[float] = Field(None, ge=-50, le=200)
    sm_clock_mhz_mean: Optional[float] = Field(None, ge=0, le=10_000)
    throttled: Optional[bool] = None
    warnings: list[str] = Field(default_factory=list, max_length=200)
    telemetry: Optional[list[dict[str, Any]]] = Field(None, max_length=1_000_000)
    extra: dict[str, Any] = Field(default_factory=dict)
    created_at: Optional[str] = Str(40)

    @field_validator("throughput_median")
    @classmethod
    def _thr(cls, v):
        return _finite_pos(v, "throughput_median", MAX_THROUGHPUT)

    @field_validator("items_per_step", "flops_per_item", "tflops", "compile_s", "power_w_mean",
                     "power_w_max", "energy_j_per_item")
    @classmethod
    def _nonneg(cls, v, info):
        caps = {"power_w_mean": 10_000, "power_w_max": 10_000, "tflops": 1e6}
        return _finite_pos(v, info.field_name, caps.get(info.field_name, 1e30))

    @field_validator("samples")
    @classmethod
    def _samples(cls, v):
        for s in v or []:
            if not math.isfinite(s) or s <= 0 or s > 1e6:
                raise ValueError(f"sample {s!r} s/step is not a finite positive time")
        return v

    @field_validator("warnings")
    @classmethod
    def _warn_len(cls, v):
        if any(len(w) > 2000 for w in v):
            raise ValueError("a warning is longer than 2000 characters")
        return v


class BundleEnv(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: int
    hash: str = Field(min_length=1, max_length=128, pattern=r"^[0-9a-f]+$")
    fingerprint: dict[str, Any]


class Bundle(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal["gpuarena-bundle"]
    version: int
    created_at: Optional[str] = Str(40)
    environments: list[BundleEnv] = Field(max_length=100_000)
    results: list[BundleResult] = Field(max_length=10_000_000)

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
    results = [r for r in store.results(run_ids or None) if r.get("source") in ("measured", "imported")]
    envs = []
    for eid in sorted({r["env_id"] for r in results if r.get("env_id") is not None}):
        row = store.conn.execute("SELECT id, hash, fingerprint FROM environments WHERE id=?", (eid,)).fetchone()
        envs.append({"id": row[0], "hash": row[1], "fingerprint": json.loads(row[2])})
    for r in results:
        r["extra"] = {k: v for k, v in (r.get("extra") or {}).items() if k not in ("traceback", "stderr_tail")}
    return {"format": FORMAT, "version": VERSION, "created_at": now(), "environments": envs,
            "results": [_finite(r) for r in results]}


def write(bundle: dict, path: str) -> None:
    p = Path(path)
    if not p.resolve().parent.is_dir():
        raise UserError(f"-o {path}: folder does not exist")
    p.write_text(json.dumps(bundle, indent=1, default=str, allow_nan=False), encoding="utf-8")


# --- import --------------------------------------------------------------------

def _no_constants(name):
    raise ValueError(f"{name} is not valid JSON")


def read(path: str) -> Bundle:
    """Parse and validate a bundle file; UserError (one line) for anything wrong."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{path}: no such file")
    size = p.stat().st_size
    if size > MAX_BYTES:
        raise UserError(f"{path}: {size} bytes is larger than the {MAX_BYTES}-byte bundle limit")
    try:
        data = json.loads(p.read_text(encoding="utf-8"), parse_constant=_no_constants)
    except (ValueError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not a JSON bundle ({str(exc).splitlines()[0][:200]})") from None
    except RecursionError:  # "[[[[..." nested past Python's stack: hostile, not a bundle
        raise UserError(f"{path}: not a JSON bundle (nested too deeply)") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"{path}: not a gpuarena bundle (expected \"format\": \"{FORMAT}\")")
    try:
        bundle = Bundle.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{path}: refused, nothing imported: {pydantic_error_line(exc)[:400]}") from None
    env_ids = {e.id for e in bundle.environments}
    for i, r in enumerate(bundle.results):
        if r.env_id is not None and r.env_id not in env_ids:
            raise UserError(f"{path}: refused, nothing imported: results.{i}.env_id {r.env_id} "
                            "is not among the bundle's environments")
        if r.status == "ok" and r.throughput_median is None:
            raise UserError(f"{path}: refused, nothing imported: results.{i}: status ok without throughput_median")
    return bundle


def insert_rows(conn, rows: list[dict]) -> None:
    """INSERT result dicts on an open transaction (the caller commits or rolls back)."""
    for r in rows:
        # created_at: null means "unknown": stamp it now rather than break NOT NULL
        cols = [c for c in _RESULT_COLUMNS if c in r and c != "id" and not (c == "created_at" and r[c] is None)]
        vals = []
        for c in cols:
            v = _finite(r[c])
            if c in JSON_COLUMNS and v is not None:
                v = json.dumps(v, default=str)
            if c == "throttled" and v is not None:
                v = int(bool(v))
            vals.append(v)
        if "created_at" not in cols:
            cols.append("created_at")
            vals.append(now())
        conn.execute(f"INSERT INTO results({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", vals)


def import_bundle(store, path: str) -> dict:
    """Validate then write a bundle in one transaction.

    Returns {"run_id": import run id or None, "imported": n, "skipped_duplicates": n, "environments": n}.
    """
    bundle = read(path)
    out = {"run_id": None, "imported": 0, "skipped_duplicates": 0, "environments": len(bundle.environments)}
    with store.transaction() as conn:
        env_map = {}
        for e in bundle.environments:
            row = conn.execute("SELECT id FROM environments WHERE hash=?", (e.hash,)).fetchone()
            if row is None:
                row = (conn.execute("INSERT INTO environments(hash, fingerprint, created_at) VALUES (?,?,?)",
                                    (e.hash, json.dumps(e.fingerprint), now())).lastrowid,)
            env_map[e.id] = row[0]
        rows = []
        for r in bundle.results:
            d = r.model_dump()
            key = f"{d['run_id']}/{d['id']}/{d['case_key']}/{d['created_at']}"
            dup = conn.execute("SELECT 1 FROM results WHERE source='imported' AND "
                               "json_extract(extra, '$.bundle_key') = ?", (key,)).fetchone()
            if dup:
                out["skipped_duplicates"] += 1
                continue
            d["extra"] = {**d["extra"], "bundle_key": key, "origin_run_id": d["run_id"], "origin_source": d["source"]}
            d["source"] = "imported"
            d["env_id"] = env_map.get(d["env_id"]) if d["env_id"] is not None else None
            if d["throughput"] is not None:
                d["throughput"] = r.throughput.model_dump()
            d["origin"] = f"bundle {Path(path).name}"
            rows.append(d)
        if rows:
            run_id = new_run_id()
            device = rows[0].get("device") or "imported"
            conn.execute("INSERT INTO runs(id, created_at, suite, device, env_id, plan, argv, status) "
                         "VALUES (?,?,?,?,?,?,?,?)",
                         (run_id, now(), f"import:{Path(path).name}"[:200], device, None, "[]",
                          json.dumps(["import", str(path)]), "complete"))
            for d in rows:
                d["run_id"] = run_id
            insert_rows(conn, rows)
            out["run_id"] = run_id
            out["imported"] = len(rows)
    return out

