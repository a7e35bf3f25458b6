"""No password given to gpuarena, in any --db or base_url form, appears in any output, file, report,
bundle or table of either store (issue 40, items 1-3).  The PostgreSQL runs use the throwaway
server (trust login: the password is sent nowhere, so every form connects), the commands run in real
processes (runs.argv is the process's own command line): a test's commands one after another in one
fresh interpreter (tests.procs.gp_batch), each with its own command line in sys.argv, as its own process
would have it (each `gpuarena` process pays torch's import)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from gpuarena.redact import passwords, redact, redact_tree
from tests.procs import gp_batch
from tests.store.conftest import USER

PW = "S3CRETPW"

FORMS = [
    "postgresql://alice:{pw}@db.example/x",
    "POSTGRESQL://alice:{pw}@db.example:5432/x",
    "Postgres://alice:{pw}@db.example/x",
    "postgresql://alice@db.example/x?password={pw}",
    "postgresql://alice@db.example/x?sslmode=require&password={pw}&application_name=a",
    "postgresql://alice@db.example/x?pass%77ord={pw}",
    "postgresql://alice@db.example/x?sslpassword={pw}",
    "postgresql://alice:a#{pw}@db.example/x",
    "postgresql://alice:a/{pw}@db.example/x",
    "postgresql://alice:a?b@{pw}@db.example/x",
    "postgresql://alice:a%23{pw}@db.example/x",
    "http://alice:{pw}@127.0.0.1:18001",
    "HTTPS://alice:{pw}@serve.example/v1",
    "host=/tmp dbname=x user=alice password={pw}",
    "host=/tmp password='a b {pw}' user=alice",
    'invalid connection string: missing "=" after "POSTGRESQL://alice:{pw}@h/x" in connection info string',
]


@pytest.mark.parametrize("form", FORMS)
def test_every_password_form_is_masked(form):
    text = form.format(pw=PW)
    assert PW not in redact(text)
    assert PW not in redact(f"error: cannot reach {text}; try again")        # inside a message too
    assert PW not in json.dumps(redact_tree({"argv": ["--db", text], "extra": {"endpoint": [text]}}))


def test_a_password_the_driver_quotes_decoded_is_masked_too():
    url = f"postgresql://alice:{PW}%21@h/x"
    assert f"{PW}!" in passwords(url)
    assert PW not in redact(f"password authentication failed: '{PW}!'", passwords(url))


@pytest.mark.parametrize("text", ["postgresql://gpuarena@/db?host=/tmp/x", "http://127.0.0.1:8000",
                                  "matmul|dtype=fp32|n=1024", "https://example.com/a?b=c&d=e"])
def test_text_without_a_password_is_left_alone(text):
    assert redact(text) == text
    value = {"a": [text]}
    assert redact_tree(value) is value


# --- the whole CLI, through a real process --------------------------------------------------------

def _batch(cwd: Path, *commands: tuple) -> list[subprocess.CompletedProcess]:
    """The commands in one fresh interpreter (tests.procs.gp_batch), none of them seeing a GPUARENA_DB of the
    caller's; a command's last item may be a dict of environment variables for it alone."""
    commands = tuple((*c[:-1], {"GPUARENA_DB": None, **c[-1]}) if isinstance(c[-1], dict)
                     else (*c, {"GPUARENA_DB": None}) for c in commands)
    return gp_batch(*commands, cwd=str(cwd), timeout=600)


def _files_text(folder: Path) -> str:
    out = []
    for p in folder.rglob("*"):
        if p.is_file() and not p.name.endswith((".db", ".db-wal", ".db-shm")):
            out.append(p.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def _tables_text(url_or_path: str) -> str:
    if url_or_path.lower().startswith(("postgresql://", "postgres://")):
        import psycopg

        with psycopg.connect(url_or_path.replace("POSTGRESQL://", "postgresql://"), autocommit=True) as conn:
            return "\n".join(str(row) for t in ("runs", "results", "environments")
                             for row in conn.execute(f"SELECT * FROM {t}"))
    conn = sqlite3.connect(url_or_path)
    try:
        return "\n".join(str(row) for t in ("runs", "results", "environments")
                         for row in conn.execute(f"SELECT * FROM {t}"))
    finally:
        conn.close()


def _secret_forms(pw: str) -> list[str]:
    from urllib.parse import quote

    return [pw, quote(pw, safe="")]


@pytest.mark.parametrize("form", [
    "POSTGRESQL://{user}:{pw}@/{db}?host={host}",
    "postgresql://{user}@/{db}?host={host}&password={pw}",
    "postgresql://{user}:x%23{pw}@/{db}?host={host}",
])
def test_no_password_in_any_output_file_report_bundle_or_table(pg_url, pg_server, tmp_path, form):
    dbname = pg_url.split("@/", 1)[1].partition("?")[0]
    url = form.format(user=USER, pw=PW, db=dbname, host=pg_server)
    clean = pg_url
    done = _batch(tmp_path, ("run", "-w", "matmul", "--set", "dtype=fp32", "--repeats", "2", "--db", url),
                  ("results", "--db", url), ("results", "--format", "json", "--db", url),
                  ("export", "-o", str(tmp_path / "bundle.json"), "--db", url),
                  ("report", "--db", url, "-o", str(tmp_path / "report.html")),
                  ("results", "--run", "nosuchrun", "--db", url), ("results", {"GPUARENA_DB": url}))
    assert done[0].returncode == 0, done[0].stderr[-2000:]      # the run
    said = [r.stdout + r.stderr for r in done]
    everything = "\n".join(said) + _files_text(tmp_path) + _tables_text(clean)
    for secret in _secret_forms(PW):
        assert secret not in everything, [s for s in said if secret in s][:1] or "in a file or table"
    argv = json.loads(_tables_text_argv(clean))
    assert "--db" in argv and any("***" in a for a in argv)       # the command line kept, the password not


def _tables_text_argv(url: str) -> str:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT argv FROM runs ORDER BY created_at LIMIT 1").fetchone()[0]


@pytest.mark.parametrize("form", [
    "postgresql://{user}:a#{pw}@/{db}?host={host}",     # unencoded: libpq reads another URL
    "postgresql://{user}:a/{pw}@/{db}?host={host}",
    "postgresql://nobody:{pw}@/{db}?host={host}",        # a role the server refuses
    "postgresql://{user}@/{db}?host={host}&password={pw}&bogus_option=1",
    "POSTGRESQL://{user}:{pw}@[::1/{db}",                # an unbalanced bracket
])
def test_a_refused_url_never_shows_its_password(pg_url, pg_server, tmp_path, form):
    dbname = pg_url.split("@/", 1)[1].partition("?")[0]
    url = form.format(user=USER, pw=PW, db=dbname, host=pg_server)
    for r in _batch(tmp_path, ("run", "-w", "matmul", "--set", "dtype=fp32", "--repeats", "1", "--db", url),
                    ("results", "--db", url)):
        for secret in _secret_forms(PW):
            assert secret not in r.stdout + r.stderr + _files_text(tmp_path)
        assert "Traceback" not in r.stderr


def test_a_base_url_with_a_password_is_refused_before_anything_is_stored(tmp_path):
    db = tmp_path / "g.db"
    urls = (f"http://alice:{PW}@127.0.0.1:18001", f"http://alice:a#{PW}@127.0.0.1:18001",
            f"HTTP://alice:{PW}@127.0.0.1:18001/v1", f"http://127.0.0.1:18001/?password={PW}")
    for r in _batch(tmp_path, *(("run", "-w", "endpoint-serve", "--set", f"base_url={url}", "-r", "2", "--db", str(db))
                                for url in urls)):
        assert r.returncode == 2, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "base_url" in r.stderr, r.stderr
        assert PW not in r.stdout + r.stderr + _files_text(tmp_path)
    assert not db.exists()


def test_a_base_url_that_is_no_url_is_one_line(tmp_path):
    urls = ("http://[::1:8000", "http://127.0.0.1:99999", "http://127.0.0.1:port")
    for url, r in zip(urls, _batch(tmp_path, *(("run", "-w", "endpoint-serve", "--set", f"base_url={url}", "-r", "2",
                                                "--db", str(tmp_path / "g.db")) for url in urls))):
        assert r.returncode == 2 and "base_url" in r.stderr and len(r.stderr.strip().splitlines()) == 1, (url, r.stderr)


def test_an_old_row_with_a_password_is_not_exported(tmp_path):
    """A database an older gpuarena wrote (argv, fingerprint, extra with a password): the bundle has none."""
    from gpuarena.store import bundle
    from gpuarena.store.db import Store

    store = Store(str(tmp_path / "old.db"))
    env = store.env_id({"hostname": "h"})
    store.conn.execute("UPDATE environments SET fingerprint=? WHERE id=?",
                       (json.dumps({"hostname": "h", "servers": [{"base_url": f"http://a:{PW}@h:1"}]}), env))
    run = store.create_run("s", "cpu", [], env)
    r = {"run_id": run, "case_key": "k", "workload": "matmul", "variant": "seed", "params": {}, "device": "cpu",
         "device_name": "cpu", "env_id": env, "status": "failed", "error": f"to postgresql://u:{PW}@h/x", "unit": "x"}
    store.add_result(r)
    assert PW not in store.conn.execute("SELECT error FROM results").fetchone()[0]    # written redacted
    store.conn.execute("UPDATE results SET error=?", (f"to postgresql://u:{PW}@h/x",))   # as an old one wrote
    assert PW not in json.dumps(bundle.export(store))
    store.close()


def test_a_role_without_privileges_reads_permission_denied(pg_url, tmp_path):
    """information_schema lists only a role's own tables: such a role saw the database as empty and
    tried to create it again ("relation already exists")."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:      # a role of the server, owning nothing
        conn.execute("DROP ROLE IF EXISTS outsider")
        conn.execute("CREATE ROLE outsider LOGIN")
    url = pg_url.replace(f"{USER}@", "outsider@")
    made, *refused = _batch(
        tmp_path, ("run", "-w", "matmul", "--set", "dtype=fp32", "--repeats", "2", "-q", "--db", pg_url),  # the owner's
        ("results", "--db", url), ("run", "-w", "matmul", "--set", "dtype=fp32", "--repeats", "2", "-q", "--db", url))
    assert made.returncode == 0, made.stderr[-2000:]
    for r in refused:
        assert r.returncode == 2 and "permission denied" in r.stderr, r.stderr[-2000:]
        assert "already exists" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
