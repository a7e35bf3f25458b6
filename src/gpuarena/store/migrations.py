"""The schema, as migrations: each brings the database from version i to i+1.

Never edit one that has shipped: append a new one.
"""

from __future__ import annotations

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


# 3: a global identity per result (uid: kept through export and import, so a result
# that travels A -> B -> A is recognised), indexed; and the process that owns a run
# (its --resume lock).  Rows stored before get the key imports used until now
# (run/id/case/time, or the bundle_key an import recorded), so old bundles still match.
MIGRATIONS.append("""
    ALTER TABLE results ADD COLUMN uid TEXT;
    UPDATE results SET uid = CASE
        WHEN source = 'imported' AND json_extract(extra, '$.bundle_key') IS NOT NULL
            THEN 'b:' || json_extract(extra, '$.bundle_key')
        ELSE 'b:' || ifnull(run_id, 'None') || '/' || id || '/' || case_key || '/' || ifnull(created_at, 'None')
        END
        WHERE source != 'published';
    UPDATE results SET uid = NULL WHERE uid IS NOT NULL AND id NOT IN (SELECT MIN(id) FROM results GROUP BY uid);
    CREATE UNIQUE INDEX results_uid ON results(uid);
    ALTER TABLE runs ADD COLUMN owner TEXT;
""")
