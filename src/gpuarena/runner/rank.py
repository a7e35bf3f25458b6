"""What each rank runs under torchrun:

    python -m torch.distributed.run --nproc_per_node N ... -m gpuarena.runner.rank CASE.json RESULT.json

Every rank joins the process group (NCCL on its own GPU, gloo on the CPU),
runs the same measured path as a one-process case, and sends its measurement
to rank 0, which combines them and alone writes the result file: the ranks
never touch the database.  A rank that dies makes torchrun stop the others and
exit non-zero; the executor then stores the case as crashed (or, when rank 0 had
written the result already, keeps it with a warning: teardown, runner/executor.py).
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import sys

from gpuarena.measure import stats
from gpuarena.measure.energy import combined_source
from gpuarena.runner.child import write_atomic
from gpuarena.runner.measure_case import measure
from gpuarena.runner.torchrun import ELSEWHERE, RANK_ENV
from gpuarena.spec.model import Case
from gpuarena.workloads import registry

# A collective that waits longer than this for a peer gives up instead of hanging
# until the case's time limit: no step of any workload here takes minutes.
PG_TIMEOUT_S = 300.0


def setup_group(device: str):
    """Join the process group; returns the device spec of this rank."""
    import torch
    import torch.distributed as dist

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    timeout = datetime.timedelta(seconds=PG_TIMEOUT_S)
    if device.startswith("cuda"):
        spec = f"cuda:{local_rank}"
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl", timeout=timeout, device_id=torch.device(spec))
    else:
        spec = "cpu"
        dist.init_process_group("gloo", timeout=timeout)
    return spec


def _sum_or_none(values):
    vs = [v for v in values if v is not None]
    return sum(vs) if vs else None


def _max_or_none(values):
    vs = [v for v in values if v is not None]
    return max(vs) if vs else None


def _energy(per_rank: list[dict], items: list[float]) -> dict:
    """Joules per item over every rank's items, and their sources; none unless every rank has some."""
    energies = [res.get("energy_j_per_item") for res in per_rank]
    if not all(e is not None for e in energies):
        return {"energy_j_per_item": None, "energy_source": None}     # not rank 0's alone
    return {"energy_j_per_item": sum(e * n for e, n in zip(energies, items)) / sum(items),
            "energy_source": combined_source(res.get("energy_source") for res in per_rank)}


def combine(per_rank: list[dict], world_size: int, wl_cls) -> dict:
    """One result from every rank's measurement.

    The workload's ``rank_aggregate`` says how the ranks' items/s of one repeat combine:
    data-parallel work ("sum") totals them; a collective ("min") is one operation, as
    fast as its slowest rank; "mean" averages.  The step time stored is the slowest rank's.
    """
    out = dict(per_rank[0])
    out["extra"] = dict(out.get("extra") or {}, world_size=world_size)
    failed = [(r, res) for r, res in enumerate(per_rank) if res.get("status") != "ok"]
    if failed:
        r, res = failed[0]
        out.update(status=res.get("status") or "failed", error=f"rank {r}: {res.get('error')}")
        out["extra"]["traceback"] = (res.get("extra") or {}).get("traceback")
        out["extra"]["failed_ranks"] = [r for r, _ in failed]
        return out
    aggregate = wl_cls.rank_aggregate
    combine_rates = {"sum": sum, "min": min, "mean": statistics.fmean}[aggregate]
    repeats = min(len(res["samples"]) for res in per_rank)
    step_s, throughput = [], []
    for j in range(repeats):
        rates = [res["items_per_step"] / res["samples"][j] for res in per_rank]
        throughput.append(combine_rates(rates))
        step_s.append(max(res["samples"][j] for res in per_rank))
    tsum = stats.summarize(throughput, unit=out["unit"])
    items = [res["items_per_step"] for res in per_rank]
    out["samples"] = step_s
    out["throughput"] = tsum.to_dict()
    out["throughput_median"] = tsum.median
    out["latency"] = stats.summarize(step_s, unit="s/step").to_dict()
    out["items_per_step"] = sum(items) if aggregate == "sum" else items[0]
    fpi = out.get("flops_per_item")
    out["tflops"] = tsum.median * fpi / 1e12 if fpi else None
    warnings = stats.warnings_for(tsum)
    for res in per_rank:
        warnings += [w for w in res.get("warnings") or [] if w not in warnings and "spread" not in w
                     and "samples of" not in w]
    out["warnings"] = warnings
    # Power and energy are per device: the job's figures are the sums.
    out["power_w_mean"] = _sum_or_none(res.get("power_w_mean") for res in per_rank)
    out["power_w_max"] = _sum_or_none(res.get("power_w_max") for res in per_rank)
    out.update(_energy(per_rank, items))
    out["temp_c_max"] = _max_or_none(res.get("temp_c_max") for res in per_rank)
    out["throttled"] = any(res.get("throttled") for res in per_rank)
    out["peak_memory_bytes"] = _max_or_none(res.get("peak_memory_bytes") for res in per_rank)
    out["compile_s"] = _max_or_none(res.get("compile_s") for res in per_rank)
    out["extra"]["per_gpu_throughput"] = tsum.median / world_size
    out["extra"]["per_rank"] = [
        {"rank": r, "throughput_median": res["throughput_median"],
         "step_s_median": stats.summarize(res["samples"]).median,
         "peak_memory_bytes": res.get("peak_memory_bytes"), "power_w_mean": res.get("power_w_mean"),
         "energy_source": res.get("energy_source"),
         "host": (res.get("extra") or {}).get("host"), "env": (res.get("extra") or {}).get("env"),
         **{k: v for k, v in (res.get("extra") or {}).items() if k in wl_cls.rank_extra}}
        for r, res in enumerate(per_rank)]
    wl_cls.finalize(out, per_rank, world_size)
    return out


def main(argv: list[str]) -> int:
    import torch.distributed as dist

    from gpuarena.runner.child import watch_runner

    watch_runner()  # a SIGKILLed runner takes torchrun and every rank down with it
    case_path, result_path = argv[1], argv[2]
    with open(case_path) as f:
        case = Case(**json.load(f))
    spec = setup_group(case.device)
    rank, world = dist.get_rank(), dist.get_world_size()
    mine = measure(case, rank=rank, world_size=world, device_spec=spec)
    mine["extra"]["host"] = os.uname().nodename
    mine["extra"]["env"] = {k: os.environ.get(k) for k in RANK_ENV}   # provenance: what this rank saw
    if mine.get("status") != "ok":   # shows in the stderr tail if the case ends as crashed
        print(f"gpuarena rank {rank}: {mine.get('status')}: {mine.get('error')}", file=sys.stderr)
    gathered = [None] * world if rank == 0 else None
    dist.gather_object(mine, gathered, dst=0)
    result = combine(gathered, world, registry.runnable(case.workload)) if rank == 0 else None
    # Rank 0 (on node 0: torchrun numbers ranks node by node) writes the one result; across
    # nodes, the first rank of every other node tells its executor where it went, so a
    # multi-node case is stored once, by node 0, never once per node.
    node = int(os.environ.get("GROUP_RANK", "0"))
    if result is not None:
        result["extra"]["node_rank"] = node
        write_atomic(result_path, result)
    elif int(os.environ.get("LOCAL_RANK", "0")) == 0:
        write_atomic(result_path, {"status": ELSEWHERE, "error": f"stored by node 0 (this is node {node})",
                                   "extra": {"node_rank": node, "world_size": world}})
    # Every rank leaves together: a rank tearing its connections down while a peer is still
    # in gather/broadcast makes that peer exit non-zero (seen now and then with gloo).
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
