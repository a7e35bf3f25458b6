"""The CLI on a PostgreSQL store: `run`, `results`, `export` and `import` through $GPUARENA_DB or
--db; a server that cannot be reached or refuses the login is one line and exit 2."""

from __future__ import annotations

import json
import os


def _in(folder: str):
    """The CLI run from ``folder``: a PostgreSQL run writes its report under the working folder."""
    from tests.conftest import gpuarena

    def run(*args, env=None):
        return gpuarena(*args, cwd=folder, env=env)
    return run


def test_run_results_export_through_postgres(pg_url, tmp_path):
    run_cli = _in(str(tmp_path))
    env = {"GPUARENA_DB": pg_url}
    r = run_cli("run", "-w", "matmul", "--set", "dtype=fp32", "--repeats", "2", "-q", env=env)
    assert r.returncode == 0, r.stderr
    out = run_cli("results", "--run", "latest", "--format", "json", env=env)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert rows and all(x["workload"] == "matmul" and x["status"] == "ok" for x in rows), (r.stderr, out.stderr)
    bundle = str(tmp_path / "b.json")
    assert run_cli("export", "-o", bundle, "--db", pg_url).returncode == 0
    sqlite = str(tmp_path / "copy.db")
    imp = run_cli("import", bundle, "--db", sqlite)
    assert imp.returncode == 0 and f"imported {len(rows)} result(s)" in imp.stdout
    back = run_cli("import", bundle, "--db", pg_url)             # the same results: recognised
    assert back.returncode == 0 and "imported 0 result(s)" in back.stdout


def test_unreachable_or_refused_is_one_line(pg_server, tmp_path, cli):
    run_cli = cli
    for url in (f"postgresql://gpuarena@/nodb?host={tmp_path}",           # no server there
                f"postgresql://intruder:pw@/postgres?host={pg_server}"):   # a role the server refuses
        for verb in (("results",), ("run", "-w", "matmul", "--repeats", "1")):
            r = run_cli(*verb, "--db", url)
            assert r.returncode == 2, r.stderr
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1 and "cannot connect to PostgreSQL" in lines[0], r.stderr
            assert ":pw@" not in r.stderr                           # the password is never shown
    assert not os.path.exists("postgresql:")                       # nothing made of the URL as a path


def test_a_postgres_run_writes_its_report_in_the_working_folder(pg_url, tmp_path):
    r = _in(str(tmp_path))("run", "-w", "matmul", "--set", "dtype=fp32", "--repeats", "2", "-q", "--db", pg_url)
    assert r.returncode == 0, r.stderr
    (report,) = (tmp_path / "reports").iterdir()
    assert report.suffix == ".html" and f"report: {report}" in r.stderr + r.stdout


def test_an_empty_postgres_database_is_not_read_as_results(pg_url, cli):
    run_cli = cli
    r = run_cli("results", "--db", pg_url)
    assert r.returncode == 2 and "no gpuarena results" in r.stderr
