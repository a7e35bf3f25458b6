"""Two nodes on one machine: two `gpuarena run` runners (a process of its own, and the test's
process through gpuarena.cli.main) meet through torchrun's c10d rendezvous (gloo, one rank each).
The case is measured once over world size 2 and stored once, by node 0; node 1 stores nothing and
says where the result went."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid

from gpuarena.store.db import Store
from tests.conftest import ROOT, gpuarena


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_nodes_store_one_result_with_world_size_two(tmp_path):
    port, rdzv_id = free_port(), uuid.uuid4().hex[:8]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), OMP_NUM_THREADS="1", COLUMNS="80")

    def args(node: int) -> list[str]:
        return ["run", "-w", "allreduce", "--device", "cpu", "--gpus", "1", "--size", "tiny", "--repeats", "2",
                "--set", "size_mb=0.0625", "-q", "--db", str(tmp_path / f"node{node}.db"),
                "--torchrun-arg=--nnodes=2", f"--torchrun-arg=--rdzv-endpoint=127.0.0.1:{port}",
                "--torchrun-arg=--rdzv-backend=c10d", f"--torchrun-arg=--rdzv-id={rdzv_id}"]

    # two runners: a process of its own, and this one (gpuarena.cli.main in process) meanwhile
    proc = subprocess.Popen([sys.executable, "-m", "gpuarena", *args(0)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        here = gpuarena(*args(1), cwd=str(tmp_path), env={"COLUMNS": "80"})
        outs = [proc.communicate(timeout=300), (here.stdout, here.stderr)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for code, (_out, err) in zip((proc.returncode, here.returncode), outs):
        assert code == 0, err[-3000:]
    rows = {node: Store(str(tmp_path / f"node{node}.db")).results() for node in (0, 1)}
    assert sum(len(r) for r in rows.values()) == 1, {n: [(r.status, r.error) for r in rs]
                                                     for n, rs in rows.items()}
    # which process is node 0 is the rendezvous's choice (c10d numbers the nodes as they join)
    head = next(n for n, rs in rows.items() if rs)
    other = 1 - head
    (stored,) = rows[head]
    assert stored.status == "ok" and stored.extra.world_size == 2
    assert stored.extra.node_rank == 0 and len(stored.extra.per_rank) == 2
    assert "stored by node 0 (this is node 1)" in " ".join(outs[other][1].split())
    # the other node's run is complete: its one case is held by node 0, not missing
    store = Store(str(tmp_path / f"node{other}.db"))
    assert store.run(store.latest_run_id())["status"] == "complete"
