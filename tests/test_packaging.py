"""The package as a user installs it: a wheel built with `python -m build`, installed
(not editable) into a fresh virtual environment, runs from another folder with its
data files (suites, catalog, published results, report template).  About 12 s on
2 busy cores, so not marked slow."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

from tests.conftest import ROOT


def sh(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)


def test_wheel_in_a_fresh_venv_runs_list_and_smoke(tmp_path):
    pytest.importorskip("build")
    src = tmp_path / "src-copy"      # build from a copy: the checkout gets no build/ or egg-info
    shutil.copytree(os.path.join(ROOT, "src"), src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, f), src / f)
    # --no-isolation: the build backend (setuptools) comes from this environment, no index needed
    b = sh(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"), str(src))
    assert b.returncode == 0, b.stderr[-2000:]
    wheel = glob.glob(str(tmp_path / "dist" / "gpuarena-*.whl"))[0]

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}   # nothing of this checkout
    env.update(OMP_NUM_THREADS="1", COLUMNS="80")
    venv = tmp_path / "venv"
    # no pip of its own (ensurepip: ~4 CPU s): this environment's pip installs into it (pip --python)
    assert sh(sys.executable, "-m", "venv", "--without-pip", str(venv)).returncode == 0
    py = str(venv / "bin" / "python")
    inst = sh(sys.executable, "-m", "pip", "--python", py, "install", "--no-deps", "--no-index", "-q", wheel,
              cwd=tmp_path, env=env)
    assert inst.returncode == 0, inst.stderr[-2000:]
    # The dependencies (torch & co.) come from this environment's site-packages, appended after the
    # venv's own: the gpuarena imported is the wheel's, never this checkout's.
    site = sh(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", env=env).stdout.strip()
    with open(os.path.join(site, "zz_deps.pth"), "w") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    exe = str(venv / "bin" / "gpuarena")
    work = tmp_path / "elsewhere"
    work.mkdir()

    where = sh(py, "-c", "import gpuarena; print(gpuarena.__file__)", cwd=work, env=env)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr
    listed = sh(exe, "list", cwd=work, env=env)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "sd15-generate" in listed.stdout and "smoke" in listed.stdout
    run = sh(exe, "run", "--suite", "smoke", "-w", "matmul", "--db", str(work / "g.db"), "-q", cwd=work, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "matmuls/s" in run.stdout and (work / "reports").is_dir()
    assert glob.glob(str(work / "reports" / "*.html"))   # the report template shipped in the wheel
    gpus = sh(exe, "gpus", "--format", "csv", cwd=work, env=env)
    assert gpus.returncode == 0 and "NVIDIA H200" in gpus.stdout
