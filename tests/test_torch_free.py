"""The read-only verbs never import torch: the registry hands out each workload's torch-free spec
(workloads/<name>/spec.py), and only the runner loads a body (run.py, ``registry.runnable``).

Each verb runs in a fresh ``python`` process (so nothing this test process imported counts) against
an empty SQLite database; the process then says whether ``torch`` is in ``sys.modules``.  No timing is
asserted: a busy machine passes alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The verb, then what its exit status and output must be against an empty database (so the verb really
# ran to its answer, or to its one-line error, and did not stop at argument parsing).
VERBS = [
    (["check", "-w", "resnet50-train", "--gpu", "H100-SXM", "--precision", "bf16", "--batch-size", "256",
      "--throughput", "3000"], 0, "resnet50-train"),
    (["advise", "-w", "resnet50-train"], 2, "no finite measured or credible published resnet50-train result"),
    (["advise", "-w", "llm-serve"], 0, "GPUs for serving"),
    (["whatif", "-w", "resnet50-train", "--gpu", "H100-SXM", "--throughput", "3000"], 0, "What if"),
    (["whatif", "-w", "resnet50-train", "--gpu", "H100-SXM"], 2, "no single-GPU resnet50-train result"),
    (["compare", "-b", "H100-SXM"], 2, "no ok results"),
    (["results"], 0, "0 result(s)"),
    (["cost"], 2, "no ok results"),
    (["gpus"], 0, "H100"),
    (["list"], 0, "resnet50-train"),
]

PROBE = """
import json, runpy, sys
sys.argv = ["gpuarena", *json.loads(sys.argv[1])]
code = 0
try:
    runpy.run_module("gpuarena", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
loaded = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
print(json.dumps({"code": code, "torch": loaded[:5]}), file=sys.stderr)
"""


@pytest.fixture(scope="module")
def empty_db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("torch_free") / "empty.db")
    subprocess.run([sys.executable, "-c", f"from gpuarena.store.db import Store; Store({path!r})"],
                   check=True, env=_env(path), timeout=300)
    return path


def _env(db: str) -> dict:
    env = dict(os.environ, GPUARENA_DB=db, NO_COLOR="1", COLUMNS="200")
    env["PYTHONPATH"] = os.path.join(ROOT, "src") + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.mark.parametrize("argv, code, says", VERBS, ids=[" ".join(v[0][:2]) for v in VERBS])
def test_a_read_only_verb_imports_no_torch(empty_db, argv, code, says):
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv)], capture_output=True, text=True,
                         env=_env(empty_db), timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    verdict = json.loads(out.stderr.strip().splitlines()[-1])
    assert verdict["torch"] == [], f"gpuarena {' '.join(argv)} imported {verdict['torch']}"
    if code is not None:
        assert verdict["code"] == code, (out.stdout[-1500:], out.stderr[-1500:])
    assert says in out.stdout + out.stderr


def test_the_runner_loads_the_body(empty_db):
    """The other side: the body is what imports torch, and only registry.runnable reaches it."""
    probe = ("import sys\nfrom gpuarena.workloads import registry\n"
             "spec = registry.get('matmul')\nassert 'torch' not in sys.modules\n"
             "body = registry.runnable('matmul')\nassert 'torch' in sys.modules and issubclass(body, spec)\n"
             "assert body.fingerprint() == spec.fingerprint()\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=_env(empty_db),
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
