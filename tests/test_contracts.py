"""The import layers of pyproject.toml's [tool.importlinter] hold (lint-imports, as CI runs it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def lint_imports() -> str | None:
    here = Path(sys.executable).parent / "lint-imports"
    return str(here) if here.exists() else shutil.which("lint-imports")


@pytest.mark.skipif(lint_imports() is None,
                    reason="import-linter is not installed (pip install -e '.[test]' brings it)")
def test_import_layers_hold():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout
