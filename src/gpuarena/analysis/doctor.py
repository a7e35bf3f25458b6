"""`gpuarena doctor`: a verdict per GPU from a short suite (spec/suites/doctor.yaml).

Each GPU of the host runs the same checks (matmul per dtype, device memory copy,
host transfers, one small training step; one all-reduce over all of them where
there are several).  A GPU's verdict, worst first:

- FAIL   a check did not complete (crashed, out of memory, timed out);
- SLOW   a figure below its expected band (analysis/expected.py), or an outlier
         among the host's GPUs (analysis/fleet.py's rule; with two GPUs, more
         than 10% under its peer);
- CHECK  nothing slow, but its recorded state is not a healthy card's (power
         limit under TDP, capped clocks, ECC errors, MIG, other processes, ...);
- OK     none of these.

On a CPU the checks run at their tiny sizes: they prove that the install works,
not how fast anything is, so the verdict there says so.
"""

from __future__ import annotations

from gpuarena.analysis import causes as C
from gpuarena.analysis import expected as E
from gpuarena.analysis import fleet as F
from gpuarena.data import catalog
from gpuarena.workloads import registry
from gpuarena.store.result import Result

PAIR_GAP = 0.10        # two GPUs: flag the slower one past this gap (no spread to estimate from two)
ORDER = ("FAIL", "SLOW", "CHECK", "OK")


def check_name(r: Result) -> str:
    p = r.params
    cls = registry.find(r.workload)
    if cls is not None and cls.label(p) != cls.name:   # what sets its ceiling apart: dtype, pinning
        return cls.label(p)
    if r.gpus > 1:
        return f"{r.workload} x{r.gpus} {p.get('size_mb')} MiB"
    return r.workload if r.variant == "seed" else f"{r.workload} {r.variant}"


def _peers(single: list[Result]) -> dict[tuple[str, str], dict]:
    """(device, check) -> {ratio, slow} against the host's other GPUs on the same check."""
    by_check: dict[str, dict[str, float]] = {}
    for r in single:
        if r.status == "ok" and r.throughput_median:
            by_check.setdefault(check_name(r), {})[r.device] = r.throughput_median
    out = {}
    for check, figs in by_check.items():
        if len(figs) == 2:
            best = max(figs.values())
            for dev, v in figs.items():
                out[(dev, check)] = {"ratio": v / best, "slow": v < (1 - PAIR_GAP) * best}
        elif len(figs) >= 3:
            for dev, x in F.outliers(figs).items():
                out[(dev, check)] = {"ratio": x["ratio"], "slow": x["outlier"]}
    return out


def verdicts(results: list[Result], pool: list[Result], fp: dict | None, environment=lambda env_id: None) -> dict:
    """{"gpus": [{device, name, verdict, why, checks}], "links": [...], "tiny": bool}."""
    rows = E.annotate(results, pool, environment)
    single = [r for r in rows if r.gpus == 1]
    peers = _peers(single)
    static = {g.get("index"): g for g in (fp or {}).get("gpus") or []}
    vol = {g.get("index"): g for g in (fp or {}).get("gpus_volatile") or []}
    gpus = []
    for dev in dict.fromkeys(r.device for r in single):
        mine = [r for r in single if r.device == dev]
        checks, fail, slow = [], [], []
        for r in mine:
            e = r.derived.expected
            peer = peers.get((dev, check_name(r)), {})
            checks.append({"check": check_name(r), "status": r.status, "value": r.throughput_median,
                           "unit": r.unit, "expected": e and e.figure, "vs_expected": e and e.ratio,
                           "basis": e and e.basis, "vs_peers": peer.get("ratio"), "below": bool(e and e.below),
                           "peer_slow": bool(peer.get("slow")), "error": r.error})
            if r.status not in ("ok", "skipped"):
                fail.append(f"{check_name(r)} {r.status}")
            if e is not None and e.below:
                slow.append(f"{check_name(r)} {e.ratio:.2f}x of expected")
            if peer.get("slow"):
                slow.append(f"{check_name(r)} {peer['ratio']:.2f}x of the host's GPUs")
        idx = C.gpu_indices(mine[0])[0] if dev.startswith("cuda") else None
        health = []
        if idx is not None:
            g = catalog.find(mine[0].device_name or "")
            health = C.gpu_causes(static.get(idx) or {}, vol.get(idx) or {}, g.tdp_w if g else None,
                                  g.pcie_gen if g else None)
            health += C.host_causes(fp or {}, {(vol.get(idx) or {}).get("numa_node")})
        verdict = "FAIL" if fail else "SLOW" if slow else "CHECK" if health else "OK"
        gpus.append({"device": dev, "name": mine[0].device_name, "verdict": verdict,
                     "why": fail + slow + health, "checks": checks})
    links = [{"check": check_name(r), "status": r.status, "value": r.throughput_median,
              "unit": r.unit, "busbw_gbs": r.extra.busbw_gbs}
             for r in rows if r.gpus > 1]
    tiny = any(r.size == "tiny" for r in results)
    return {"gpus": gpus, "links": links, "tiny": tiny,
            "verdict": min((g["verdict"] for g in gpus), key=ORDER.index) if gpus else "FAIL"}
