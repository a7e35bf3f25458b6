"""End to end on the CPU: torchrun starts 2 gloo ranks per case, through the real CLI, runner and database."""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time

import psutil
import pytest

from gpuarena.analysis.rows.derived import with_derived
from gpuarena.analysis.rows.scaling import efficiency
from gpuarena.store.db import Store

from tests.conftest import ROOT

SUITE = """
name: multigpu-test
method: {size: tiny, repeats: 2}
entries:
  - workload: ddp-train
    variants: [seed]
    gpus: [1, 2]
  - workload: allreduce
    params: {size_mb: 0.0625}
    gpus: [2]
"""


def test_ddp_and_allreduce_end_to_end(cli, tmp_path, db_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    p = cli("run", "--suite", str(suite), "--device", "cpu", "--db", db_path, "-q")
    assert p.returncode == 0, p.stderr[-3000:]
    rows = Store(db_path).results()
    assert [(r.workload, r.gpus, r.status) for r in rows] == [
        ("ddp-train", 1, "ok"), ("ddp-train", 2, "ok"), ("allreduce", 2, "ok")], \
        [(r.status, r.error, (r.extra.stderr_tail or "")[-1500:]) for r in rows]
    one, two, ar = with_derived(rows)   # the scaling efficiency is derived when read

    # ddp-train: total = sum of the ranks' items/s, per GPU = total / 2, efficiency against N=1.
    assert two.extra.world_size == 2 and len(two.extra.per_rank) == 2
    assert two.items_per_step == 2 * 2                     # batch 2 per rank
    per_rank_sum = sum(r["throughput_median"] for r in two.extra.per_rank)
    assert two.throughput_median == pytest.approx(per_rank_sum, rel=0.5)
    assert two.extra.per_gpu_throughput == pytest.approx(two.throughput_median / 2)
    assert two.derived.scaling_efficiency == pytest.approx(
        efficiency(two.throughput_median, 2, one.throughput_median))
    assert two.derived.scaling_baseline_id == one.id
    for key in ("comm_total_s", "step_sync_s", "step_nosync_s"):
        assert getattr(two.extra, key) > 0, key
    assert two.extra.comm_exposed_s >= 0
    assert 0 <= two.extra.overlap_fraction <= 1
    # NVLink multicast stays off on every rank (torchrun passes the environment through).
    for r in two.extra.per_rank:
        assert r["env"] == {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                            "NVSHMEM_DISABLE_NVLS": "1"}

    # allreduce: algbw = size / time per call, busbw = algbw x 2(n-1)/n exactly, result checked.
    e = ar.extra
    assert ar.unit == "GB/s"
    assert e.size_bytes == 65536 and e.result_check == "passed"
    assert e.time_per_call_s == pytest.approx(ar.latency.median)
    assert e.algbw_gbs == pytest.approx(65536 / e.time_per_call_s / 1e9)
    assert e.busbw_gbs == e.algbw_gbs * 2 * (2 - 1) / 2
    # the stored throughput is the median of the per-repeat rates (GB per call / seconds per call)
    assert ar.throughput_median == pytest.approx(statistics.median(65536 / 1e9 / s for s in ar.samples))
    assert all(r["result_check"] == "passed" for r in e.per_rank)


DYING = """
name: dying-rank
method: {size: tiny, repeats: 1000, timeout_s: 200}
entries:
  - workload: ddp-train
    gpus: [2]
  - workload: broadcast
    gpus: [2]
    method: {repeats: 2}
"""


def _rank_process(parent: psutil.Process, local_rank: str):
    for p in parent.children(recursive=True):
        try:
            if "gpuarena.runner.rank" in " ".join(p.cmdline()) and p.environ().get("LOCAL_RANK") == local_rank:
                return p
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return None


def _in_group(rank: psutil.Process) -> bool:
    try:
        return sum(c.status == psutil.CONN_ESTABLISHED for c in rank.net_connections(kind="tcp")) >= 2
    except psutil.Error:
        return False


def test_a_dying_rank_is_a_crashed_case_and_the_suite_goes_on(tmp_path, db_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(DYING)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-m", "gpuarena", "run", "--suite", str(suite), "--device", "cpu",
                             "--db", db_path, "-q"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        parent = psutil.Process(proc.pid)
        victim, deadline = None, time.monotonic() + 300
        while victim is None and time.monotonic() < deadline:
            victim = _rank_process(parent, "1")
            time.sleep(0.2)
        assert victim is not None, "rank 1 never started"
        # Killed once it is in the process group (its store and gloo connections are up): from then on
        # rank 0 waits on it in every collective (1000 repeats: the case would run for minutes).
        while not _in_group(victim) and victim.is_running() and time.monotonic() < deadline:
            time.sleep(0.1)
        victim.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    rows = Store(db_path).results()
    assert [(r.workload, r.status) for r in rows] == [("ddp-train", "crashed"), ("broadcast", "ok")]
    assert rows[0].error
    assert rows[1].extra.result_check == "passed"
    assert rows[1].extra.busbw_gbs == rows[1].extra.algbw_gbs   # broadcast: factor 1
