"""A real PostgreSQL server for the store's tests: a throwaway cluster in a temporary folder,
started once per session with Debian's initdb and pg_ctl, listening only on a unix socket in
that folder.  PostgreSQL refuses to run as root, so under root (CI) the cluster belongs to the
`postgres` user the package creates (or `nobody`).  Each test gets a database of its own.
Skipped, with the reason, only where the server's binaries are absent (`.ci/run` installs them)."""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile

import pytest

BIN_GLOB = "/usr/lib/postgresql/*/bin"
USER = "gpuarena"
_counter = itertools.count()


def _bindir() -> str | None:
    for d in sorted(glob.glob(BIN_GLOB), reverse=True):
        if os.path.exists(os.path.join(d, "initdb")) and os.path.exists(os.path.join(d, "pg_ctl")):
            return d
    found = shutil.which("pg_ctl")
    return os.path.dirname(found) if found and shutil.which("initdb") else None


def _owner() -> dict:
    """subprocess arguments that run the server as a non-root user."""
    if os.geteuid() != 0:
        return {}
    for name in ("postgres", "nobody"):
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            continue
        return {"user": pw.pw_uid, "group": pw.pw_gid}
    pytest.skip("running as root with neither a postgres nor a nobody user to run PostgreSQL as")


class Cluster:
    """A throwaway PostgreSQL cluster: its socket folder (home), and stop/start for the fault tests."""

    def __init__(self):
        pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[test]' (or '.[postgres]')")
        self.bindir = _bindir()
        if self.bindir is None:
            pytest.skip(f"PostgreSQL server binaries not found ({BIN_GLOB}/initdb, pg_ctl): "
                        "apt-get install postgresql (as .ci/run does)")
        self.owner = _owner()
        # short: a unix socket path has ~100 characters; as root the server runs as another user, who must
        # reach the folder: a private $TMPDIR (mktemp -d, 0700) would stop initdb, so /tmp is used then
        self.home = tempfile.mkdtemp(prefix="gpa-pg-", dir="/tmp" if self.owner else None)
        if self.owner:
            os.chown(self.home, self.owner["user"], self.owner["group"])
        self.data = os.path.join(self.home, "data")
        self.env = {**os.environ, "LC_ALL": "C"}
        self._run(os.path.join(self.bindir, "initdb"), "-D", self.data, "-U", USER, "-A", "trust", "-E", "UTF8",
                  "--no-sync")
        self.start()

    def _run(self, *args, check=True):
        return subprocess.run(args, check=check, capture_output=True, text=True, env=self.env, cwd=self.home,
                              timeout=120, **self.owner)

    def start(self) -> None:
        opts = f"-k {self.home} -c listen_addresses='' -c fsync=off -c max_connections=100"
        self._run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-o", opts, "-l",
                  os.path.join(self.home, "log"), "-w", "start")

    def stop(self) -> None:
        """As a crash stops it: every server process ends at once."""
        self._run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m", "immediate", "-w", "stop", check=False)

    def pids(self) -> list[int]:
        """The postmaster and every process it started (the backends serving connections)."""
        import psutil

        with open(os.path.join(self.data, "postmaster.pid")) as f:
            main = psutil.Process(int(f.readline()))
        return [main.pid] + [c.pid for c in main.children(recursive=True)]

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server():
    """The socket folder of a running throwaway PostgreSQL cluster."""
    cluster = Cluster()
    try:
        yield cluster.home
    finally:
        cluster.close()


def url_for(home: str, dbname: str) -> str:
    return f"postgresql://{USER}@/{dbname}?host={home}"


@pytest.fixture
def pg_url(pg_server):
    """A URL of an empty database of its own on the throwaway server."""
    import psycopg

    name = f"t{os.getpid()}_{next(_counter)}"
    with psycopg.connect(url_for(pg_server, "postgres"), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return url_for(pg_server, name)


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path):
    """The store's tests run against both back ends: an SQLite file path, or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return request.getfixturevalue("pg_url")
