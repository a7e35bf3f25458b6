"""whatif: a prediction at N GPUs does not depend on which other GPU counts were asked for, and it does not
carry one node's NVLink beyond one node."""

from __future__ import annotations

import os

import pytest

from gpuarena.analysis.physics import whatif
from gpuarena.store.bundle import import_bundle
from gpuarena.store.db import Store

X2 = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "data", "h200-x2-2026-11-29.json")


@pytest.fixture(scope="module")
def x2(tmp_path_factory):
    """The shipped two-H200 bundle: ddp-train at 1 and 2 GPUs in one run, and its all-reduce curve."""
    s = Store(str(tmp_path_factory.mktemp("x2") / "x2.db"))
    import_bundle(s, X2)
    yield s
    s.close()


@pytest.mark.parametrize("model", ["resnet50", "bert-large"])
def test_the_measured_overlap_does_not_depend_on_the_counts_asked_for(x2, model):
    """The overlap is measured at 2 GPUs.  `--n 8` alone found no modelled all-reduce at 2 among the counts
    asked for and fell back to no overlap: BERT-Large's 8-GPU step was 136.2 ms with `--n 8` and 132.6 ms
    with `--n 2,4,8`, the same question answered two ways."""
    both = whatif.predict("ddp-train", "H200", [2, 8], x2, model=model)
    alone = whatif.predict("ddp-train", "H200", [8], x2, model=model)
    assert both.overlap > 0 and "measured ddp-train" in both.overlap_from
    assert alone.overlap == pytest.approx(both.overlap)
    assert alone.overlap_from == both.overlap_from
    assert alone.rows[0].step_s == pytest.approx(both.rows[1].step_s)


@pytest.mark.parametrize("args", [
    ["whatif", "-w", "ddp-train", "--model", "bert-large", "--gpu", "H200", "--n", "8,64"],
    ["whatif", "-w", "resnet50-train", "--gpu", "A100 40GB SXM4", "--n", "16", "--throughput", "2410"],
    ["advise", "-w", "bert-large-train", "--gpus", "1024"],
    ["check", "-w", "bert-large-train", "--gpu", "A100 40GB SXM4", "--gpus", "64", "--scaling", "0.99",
     "--throughput", "110", "--batch-size", "16", "--precision", "tf32"],
])
def test_one_nodes_nvlink_is_not_carried_across_nodes(x2, cli, args):
    """64 H200s were predicted at the 2-GPU NVLink all-reduce (224 GB/s), advise scaled 1,024 B200s at 0.97,
    and check called a 64-GPU BERT-Large scaling of 0.99 plausible over 'catalog NVLink': NVLink joins the 8
    GPUs of one node, and what links nodes is a network the catalog has no figure for."""
    out = cli(*args, "--db", x2.path)
    assert out.returncode == 2, out.stdout
    assert "beyond one 8-GPU node" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_across_nodes_a_given_or_measured_busbw_is_used(x2):
    p = whatif.predict("ddp-train", "H200", [8, 64], x2, model="bert-large", busbw=40.0)
    assert [r.busbw_gbs for r in p.rows] == [40.0, 40.0]
    inside = whatif.predict("ddp-train", "H200", [8], x2, model="bert-large")
    assert "measured allreduce (2 GPUs)" in inside.busbw_from      # within the node the 2-GPU curve stands


def test_an_allreduce_measured_across_nodes_is_used_beyond_one_node(tmp_path):
    from tests.report.conftest import FINGERPRINT, RUN_ID, result

    s = Store(str(tmp_path / "n.db"))
    env = s.env_id(FINGERPRINT)
    s.create_run("multi-node", "cuda", [], env, argv=["run"], run_id=RUN_ID)
    for n, bw in ((2, 224.0), (16, 45.0)):
        s.add_result(result("allreduce", "seed", {"size_mb": 32, "dtype": "float32"}, [0.001] * 3, 1, "GB/s",
                            gpus=n, env_id=env, extra={"busbw_gbs": bw, "size_bytes": 32 * 2**20}))
    p = whatif.predict("resnet50-train", "H200", [8, 64], s, throughput=2000, batch_size=256)
    assert [r.busbw_gbs for r in p.rows] == [224.0, 45.0]     # each count from its own side of the node
    assert "measured allreduce (16 GPUs)" in p.busbw_from
    s.close()


def test_a_given_busbw_is_not_cancelled_by_the_measured_overlap(x2):
    """The overlap measured on the two NVLinked H200s was worked out against the --busbw asked about: at 20 GB/s
    it came out 0.94 and at 224 GB/s 0.34, the same 129.6 ms step either way, so --busbw changed nothing.
    The overlap belongs to the system that measured it, and a slower link now costs time."""
    slow, fast = (whatif.predict("ddp-train", "H200", [2, 8], x2, model="bert-large", busbw=b) for b in (20.0, 224.0))
    own = whatif.predict("ddp-train", "H200", [2, 8], x2, model="bert-large")
    assert slow.overlap == pytest.approx(own.overlap) == pytest.approx(fast.overlap)
    for s, f in zip(slow.rows, fast.rows):
        assert s.step_s > f.step_s * 1.2 and s.efficiency < f.efficiency


def test_no_sync_is_not_scaled_against_a_step_that_takes_four_times_the_optimizer_steps(x2, cli):
    """ddp-train no-sync takes one optimizer step per 4 micro-batches; the plain BERT-Large step takes one per
    batch.  Against it no-sync 'scaled' 1.023 at 2 H200s and 1.015 at 8: an efficiency above 1 from the
    optimizer steps skipped, not from the GPUs."""
    p = whatif.predict("ddp-train", "H200", [1, 2, 8], x2, model="bert-large", variant="no-sync")
    assert p.accum_steps == 4
    assert all(r.efficiency_vs_plain is None for r in p.rows)
    assert all(r.efficiency <= 1 for r in p.rows)
    out = cli("whatif", "-w", "ddp-train", "--model", "bert-large", "--variant", "no-sync", "--gpu", "H200",
              "--n", "2", "--db", x2.path, "-f", "md")
    assert out.returncode == 0 and "| not like for like |" in out.stdout
    seed = whatif.predict("ddp-train", "H200", [2], x2, model="bert-large")    # one optimizer step per batch
    assert seed.vs_plain_missing == "not measured"     # this bundle holds no plain BERT-Large step


@pytest.mark.parametrize("overlap", [1.0, 0.9])
def test_no_step_is_shorter_than_its_own_all_reduce(cli, overlap):
    """8 A100 PCIe cards talk over PCIe: BERT-Large's 1.3 GB all-reduce takes 92 ms.  At --overlap 1 and a
    32 ms compute step, whatif printed a 32 ms step and an efficiency of 1.000, hiding 92 ms of wire time
    behind 32 ms of compute."""
    p = whatif.predict("bert-large-train", "A100 80GB PCIe", [8], throughput=1000, batch_size=32, overlap=overlap)
    row = p.rows[0]
    assert row.comm_s > p.compute_s * 2
    assert row.step_s >= row.comm_s and row.exposed_s == pytest.approx(row.comm_s - p.compute_s)
    assert row.efficiency == pytest.approx(p.compute_s / row.comm_s)
    half = whatif.predict("bert-large-train", "A100 80GB SXM4", [8], throughput=100, batch_size=32, overlap=0.5)
    assert half.rows[0].exposed_s == pytest.approx(0.5 * half.rows[0].comm_s)   # compute hides it
