"""`gpuarena doctor`: a verdict per GPU from a short suite (spec/suites/doctor.yaml).

Each GPU of the host runs the same checks (matmul per dtype, device memory copy,
host transfers, one small training step; one all-reduce over all of them where
there are several).  A GPU's verdict, worst first:

- FAIL   a check did not complete (crashed, out of memory, timed out);
- SLOW   a figure below its expected band (analysis/verbs/expected.py), or an outlier
         among the host's GPUs (analysis/verbs/fleet.py's rule; with two GPUs, more
         than 10% under its peer);
- CHECK  nothing slow, but its recorded state is not a healthy card's (power
         limit under TDP, capped clocks, ECC errors, MIG, other processes, ...);
- OK     none of these.

The acceptance checks (runner/acceptance.py, judged by analysis/verbs/acceptance.py) add WRONG (a GEMM
result or a memory word that is not what it should be, an XID or uncorrectable error during the
checks), more FAIL, SLOW and CHECK reasons, and a verdict per pair of GPUs.  ``exit_code``: 0 when
every GPU and link is OK or CHECK (within expected), 1 when one is FAIL, WRONG or SLOW.

Matmul figures are shown in TFLOP/s (2mnk FLOP per matmul), copies in GB/s.  A published reference
whose batch differs from the check's is context: the check runs a small batch to prove the step works
and is fast in the right ballpark, and the text says so beside the ratio.

On a CPU the checks run at their tiny sizes: they prove that the install works,
not how fast anything is, so the verdict there says so.
"""

from __future__ import annotations

from typing import Optional, Union

from pydantic import BaseModel, ConfigDict

from gpuarena.analysis.rows.verdict import Health
from gpuarena.analysis.verbs import acceptance as A
from gpuarena.analysis.rows import causes as C
from gpuarena.analysis.verbs import expected as E
from gpuarena.analysis.verbs import fleet as F
from gpuarena.data import catalog
from gpuarena.workloads import registry
from gpuarena.store.result import Result

PAIR_GAP = 0.10        # two GPUs: flag the slower one past this gap (no spread to estimate from two)
Num = Union[int, float]          # a figure keeps its type in the JSON


class GpuCheck(BaseModel):
    """One check of one GPU: its figure (TFLOP/s for a matmul), against the expected figure and the host's GPUs."""

    check: str
    status: str
    value: Optional[Num] = None
    unit: Optional[str] = None
    expected: Optional[Num] = None
    vs_expected: Optional[Num] = None
    basis: Optional[str] = None
    basis_note: Optional[str] = None
    vs_peers: Optional[Num] = None
    below: bool
    peer_slow: bool
    error: Optional[str] = None


class BurnInBrief(BaseModel):
    """A burn-in's figures a reader looks for (runner/burnin.py summarise); the keys the summary had."""

    burst_tflops: Optional[Num] = None
    sustained_tflops: Optional[Num] = None
    sustained_to_burst: Optional[Num] = None
    sustained_copy_gbs: Optional[Num] = None
    first_throttle_s: Optional[Num] = None
    throttle_first_seen_s: Optional[dict[str, Num]] = None   # absent: the throttle reasons were not sampled
    sustained_sm_clock_mhz: Optional[Num] = None
    sustained_power_w: Optional[Num] = None
    temp_c_max: Optional[Num] = None
    seconds: Optional[Num] = None


class AcceptanceBrief(BaseModel):
    """A GPU's acceptance evidence, briefly (the whole of it is in the bundle)."""

    gemm_results_checked: int
    memtest_gb: Optional[Num] = None
    counters: str
    burn_in: Optional[BurnInBrief] = None


class GpuVerdict(BaseModel):
    """One GPU's verdict with its reasons, its checks and the acceptance figures a reader looks for."""

    device: str
    name: Optional[str] = None
    verdict: Health
    why: list[str]
    notes: list[str]
    checks: list[GpuCheck]
    acceptance: Optional[AcceptanceBrief] = None
    unit: Optional[str] = None     # in a fleet: host/device (UUID)


class LinkVerdict(BaseModel):
    """A multi-GPU check (a collective): its bus bandwidth against the expected figure."""

    check: str
    status: str
    value: Optional[Num] = None
    unit: Optional[str] = None     # the figure's unit; in a fleet, the link's name (host check)
    busbw_gbs: Optional[Num] = None
    expected: Optional[Num] = None
    expected_unit: Optional[str] = None
    vs_expected: Optional[Num] = None
    below: bool
    verdict: Health
    why: list[str]


class PairVerdict(BaseModel):
    """A pair of GPUs' peer copy against its link's rate (analysis/verbs/acceptance.py links)."""

    model_config = ConfigDict(extra="allow")
    pair: str
    connection: Optional[str] = None
    gbs: Optional[Num] = None
    expected_gbs: Optional[Num] = None
    ratio: Optional[Num] = None
    why: list[str]
    verdict: Health
    unit: Optional[str] = None     # in a fleet: host pair


class Doctor(BaseModel):
    """`gpuarena doctor`: a verdict per GPU, per link and per pair of GPUs, and the host's, the worst of them."""

    gpus: list[GpuVerdict]
    links: list[LinkVerdict]
    pairs: list[PairVerdict]
    pairs_skipped: Optional[str] = None
    level: Optional[str] = None
    tiny: bool
    verdict: Health


class HostVerdict(BaseModel):
    """One host's doctor verdicts in a fleet."""

    host: str
    label: Optional[str] = None
    verdict: Health
    gpus: list[GpuVerdict]
    pairs: list[PairVerdict]
    links: list[LinkVerdict]
    tiny: bool
    level: Optional[str] = None


class NamedUnit(BaseModel):
    """A GPU or link a fleet names, with every reason."""

    unit: str
    why: list[str]


class Named(BaseModel):
    """The GPUs and links a fleet names, and the exit code (1 if any)."""

    gpus: list[NamedUnit]
    links: list[NamedUnit]
    exit_code: int


class FleetVerdicts(F.Fleet):
    """`gpuarena fleet`'s whole answer: the fleet analysis, each host's doctor verdicts, the GPUs and links named."""

    hosts_verdicts: list[HostVerdict]
    named: Named


def exit_code(v: Doctor) -> int:
    """0 when the overall verdict is within expected (OK, CHECK), else 1."""
    return 0 if v.verdict.accepted else 1


def _in_units(r: Result, e) -> dict:
    """The check's figure and expected figure as people read them: TFLOP/s for a matmul, else as stored
    (a device check's expected figure is already in its unit: analysis/verbs/expected_device.py)."""
    per = (r.flops_per_item or 0) / 1e12
    if registry.has(r.workload, device_figure="compute-peak") and per and r.throughput_median:
        expected = e and (e.figure if e.unit == "TFLOP/s" else e.figure * per)
        return {"value": r.tflops or r.throughput_median * per, "unit": "TFLOP/s", "expected": expected}
    return {"value": r.throughput_median, "unit": r.unit, "expected": e and e.figure}


def _below_text(name: str, e) -> str:
    """Why a check is below expected: its own figure's band, or (a stored figure from the same slow cards
    being no defence) the catalog's (analysis/verbs/expected.py expect_device)."""
    if e.ratio * e.figure < e.low:
        return f"{name} {e.ratio:.2f}x of expected {e.figure:,.0f} {e.unit or ''} ({e.basis})".replace("  ", " ")
    return f"{name} below the catalog's expected band ({e.source})"


def _basis_note(r: Result, e) -> str | None:
    """Why a published reference of another batch is context, not a verdict."""
    pub = e.published if e is not None and e.basis == "published" else None
    batch, theirs = r.params.get("batch_size"), pub and pub.batch_size
    if batch and theirs and theirs != batch:
        return f"context: published at batch {theirs:,}, {pub.precision}; this check's batch {batch} runs slower"
    return None


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


def verdicts(results: list[Result], pool: list[Result], fp: dict | None, environment=lambda env_id: None,
             acceptance: dict | None = None) -> Doctor:
    """The Doctor verdicts of one host's results; ``acceptance``: runner/acceptance.py's evidence, judged here
    per GPU and per pair."""
    tiny = any(r.size == "tiny" for r in results)
    evidence = (acceptance or {}).get("gpus") or {}
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
            checks.append({"check": check_name(r), "status": r.status, **_in_units(r, e),
                           "vs_expected": e and e.ratio, "basis": e and e.basis, "basis_note": _basis_note(r, e),
                           "vs_peers": peer.get("ratio"), "below": bool(e and e.below),
                           "peer_slow": bool(peer.get("slow")), "error": r.error})
            if r.status not in ("ok", "skipped"):
                fail.append(f"{check_name(r)} {r.status}")
            if e is not None and e.below:
                slow.append(_below_text(check_name(r), e))
            if peer.get("slow"):
                slow.append(f"{check_name(r)} {peer['ratio']:.2f}x of the host's GPUs")
        idx = C.gpu_indices(mine[0])[0] if dev.startswith("cuda") else None
        health = []
        if idx is not None:
            g = catalog.find(mine[0].device_name or "")
            health = C.gpu_causes(static.get(idx) or {}, vol.get(idx) or {}, g.tdp_w if g else None,
                                  g.pcie_gen if g else None)
            health += C.host_causes(fp or {}, {(vol.get(idx) or {}).get("numa_node")})
        a = A.gpu(evidence[dev], tiny) if dev in evidence else {"wrong": [], "fail": [], "slow": [], "check": [],
                                                                  "notes": []}
        fail, wrong, slow, health = fail + a["fail"], a["wrong"], slow + a["slow"], health + a["check"]
        verdict = (Health.FAIL if fail else Health.WRONG if wrong else Health.SLOW if slow else Health.CHECK if health
                   else Health.OK)
        gpus.append({"device": dev, "name": mine[0].device_name, "verdict": verdict,
                     "why": fail + wrong + slow + health, "notes": a["notes"], "checks": checks,
                     "acceptance": _brief(evidence.get(dev))})
    links = [_link(r) for r in rows if r.gpus > 1]
    link_evidence = (acceptance or {}).get("links") or {}
    pairs = A.links(link_evidence, fp)
    verdict = Health.worst([g["verdict"] for g in gpus] + [x["verdict"] for x in pairs + links]) if gpus \
        else Health.FAIL
    return Doctor(gpus=gpus, links=links, pairs=pairs, pairs_skipped=link_evidence.get("skipped"),
                  level=(acceptance or {}).get("level"), tiny=tiny, verdict=verdict)


def _link(r: Result) -> dict:
    """A collective over several GPUs of the host: its bus bandwidth against the expected figure."""
    e = r.derived.expected
    below = bool(e and e.below)
    failed = r.status not in ("ok", "skipped")
    return {"check": check_name(r), "status": r.status, "value": r.throughput_median,
            "unit": r.unit, "busbw_gbs": r.extra.busbw_gbs, "expected": e and e.figure,
            "expected_unit": e and e.unit, "vs_expected": e and e.ratio, "below": below,
            "verdict": Health.FAIL if failed else Health.SLOW if below else Health.OK,
            "why": ([f"{check_name(r)} {r.status}"] if failed else [])
            + ([f"bus bandwidth {e.ratio:.2f}x of expected {e.figure:,.0f} {e.unit or ''}"] if below else [])}


def _brief(e: dict | None) -> dict | None:
    """The acceptance figures a reader looks for (the whole evidence is in the bundle)."""
    if not e:
        return None
    b = e.get("burn_in") or {}
    m = e.get("memtest") or {}
    keep = ("burst_tflops", "sustained_tflops", "sustained_to_burst", "sustained_copy_gbs", "first_throttle_s",
            "throttle_first_seen_s", "sustained_sm_clock_mhz", "sustained_power_w", "temp_c_max", "seconds")
    return {"gemm_results_checked": sum(g.get("results", 0) for g in e.get("gemm") or [])
            + (b.get("correctness") or {}).get("results", 0),
            "memtest_gb": m.get("bytes_tested", 0) / 1e9 if m else None,
            "counters": "read" if (e.get("counters_before") or {}).get("available") else "not available",
            "burn_in": {k: b[k] for k in keep if k in b} or None}


def hosts(groups: list[dict], pool: list[Result], environment=lambda env_id: None) -> list[HostVerdict]:
    """Doctor's verdicts per host of a fleet: groups are [{"results", "fp", "acceptance"}] (one per bundle
    or per environment); ``pool`` is every result (the other hosts' figures are stored references)."""
    names = F.host_names({i: g.get("fp") for i, g in enumerate(groups)},     # as analysis/verbs/fleet.py names a host
                       {i: str(g.get("label") or "?") for i, g in enumerate(groups)})
    out = []
    for i, g in enumerate(groups):
        fp = g.get("fp") or {}
        v = verdicts(g["results"], pool, fp, environment, g.get("acceptance"))
        host = names[i]
        uuids = {x.get("index"): x.get("uuid") for x in fp.get("gpus") or []}
        for x in v.gpus:
            dev = str(x.device)
            idx = int(dev.split(":")[1]) if dev.startswith("cuda:") and dev.split(":")[1].isdigit() else None
            x.unit = (f"{host}/{dev if ':' in dev else dev + ':0'}"      # as analysis/verbs/fleet.py names a GPU
                      + (f" ({uuids[idx][:12]})" if uuids.get(idx) else ""))
        for p in v.pairs:
            p.unit = f"{host} {p.pair}"
        for x in v.links:
            x.unit = f"{host} {x.check}"
        out.append(HostVerdict(host=host, label=g.get("label"), verdict=v.verdict, gpus=v.gpus, pairs=v.pairs,
                               links=v.links, tiny=v.tiny, level=v.level))
    return out


def named(fleet: F.Fleet, host_verdicts: list[HostVerdict]) -> Named:
    """The GPUs and links a fleet names, each with its reasons: an outlier against the fleet median
    (analysis/verbs/fleet.py) or a host's own verdict not within expected; and the exit code (1 if any)."""
    gpus: dict[str, list[str]] = {}
    links: dict[str, list[str]] = {}
    for c in fleet.cases:
        for unit, x in c.units.items():
            if x.outlier:
                (gpus if c.kind == "gpu" else links).setdefault(unit, []).append(
                    f"{c.workload} {x.ratio:.2f}x the fleet median")
    for h in host_verdicts:
        for x in h.gpus:
            if not x.verdict.accepted:
                key = next((u for u in gpus if u.split(" (")[0] == x.unit.split(" (")[0]), x.unit)
                gpus.setdefault(key, []).extend(f"{x.verdict}: {w}" for w in x.why)
        for p in h.pairs + h.links:
            if not p.verdict.accepted:
                links.setdefault(p.unit, []).extend(f"{p.verdict}: {w}" for w in p.why)
    return Named(gpus=[NamedUnit(unit=u, why=w) for u, w in sorted(gpus.items())],
                 links=[NamedUnit(unit=u, why=w) for u, w in sorted(links.items())],
                 exit_code=1 if gpus or links else 0)
