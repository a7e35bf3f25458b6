"""Which of my machines is the slow one?  Many runs of one suite on many hosts and GPUs.

Per case (GPU model, workload, variant, parameters, GPU count) each GPU's figure is set
against the fleet's median with a robust spread: the median absolute deviation,
scaled by 1.4826 so that it estimates a standard deviation for normal noise.  A
GPU is an outlier only when it is both statistically and practically slow:
more than ``Z`` scaled MADs *and* more than ``PRACTICAL`` below the median (on
a quiet fleet the MAD is tiny, and 0.5% off would otherwise be "5 MADs").

A single-GPU result belongs to one GPU: its host (the fingerprint's hostname,
tagged with its identity where machines share a hostname: see ``identity``)
and device index, named by UUID where the fingerprint has it.  A multi-GPU
result (a collective, DDP) belongs to the link it crossed: the GPUs of one host
(its NVLink or PCIe fabric) or the set of hosts of a multi-node case (their
NICs), so a slow link is flagged as a link, not as a GPU.

A fleet is complete when every host has a result for every case some host has;
the hosts and cases missing are reported, never filled in.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel

from gpuarena.store.result import Result
from gpuarena.workloads import registry

Z = 3.0
PRACTICAL = 0.03
MAD_SCALE = 1.4826


Num = Union[int, float]          # a figure keeps its type in the JSON


class UnitFigure(BaseModel):
    """One GPU's or link's figure in a case, against the case's median."""

    value: Num
    ratio: Num
    z: Optional[Num] = None        # scaled MADs from the median; None where the MAD is 0
    outlier: bool


class FleetCase(BaseModel):
    """One case (GPU model, workload, variant, parameters, size, GPU count) across the fleet."""

    case: str
    gpu: Optional[str] = None
    workload: str
    variant: str
    params: dict[str, Any]
    kind: Literal["gpu", "link"]
    unit: Optional[str] = None
    n: int
    median: Num
    mad: Num
    units: dict[str, UnitFigure]
    flagged: list[str]
    missing_hosts: list[str]


class Fleet(BaseModel):
    """`gpuarena fleet`'s analysis: per case its median, spread and outliers; the hosts and cases missing
    (the doctor's verdicts per host and the GPUs and links named: analysis/verbs/doctor.py FleetVerdicts)."""

    hosts: list[str]
    cases: list[FleetCase]
    flagged_gpus: list[str]
    flagged_links: list[str]
    incomplete: dict[str, list[str]]


def _host(r: Result, fp: dict | None) -> str:
    return str((fp or {}).get("hostname") or r.extra.host or f"env{r.env_id}")


def identity(fp: dict | None, key: object = None) -> str:
    """What tells one machine from another: its GPUs' UUIDs or serials, else the environment's content
    hash (a hostname is not unique: containers and cloud images share one)."""
    from gpuarena.measure.env import fingerprint_hash

    if not fp:
        return f"key:{key}"
    boards = sorted(str(g.get("uuid") or g.get("serial")) for g in fp.get("gpus") or []
                    if isinstance(g, dict) and (g.get("uuid") or g.get("serial")))
    return "gpus:" + ",".join(boards) if boards else "env:" + fingerprint_hash(fp)


def host_names(fps: dict, fallback: dict | None = None) -> dict:
    """key -> the host's name in the output: its hostname, with a short tag of its identity where
    machines of different identities share that hostname (``node#3fa2c1``)."""
    fallback = fallback or {}
    base = {k: str((fp or {}).get("hostname") or fallback.get(k) or f"env{k}") for k, fp in fps.items()}
    ident = {k: identity(fp, k) for k, fp in fps.items()}
    shared: dict[str, set] = {}
    for k, name in base.items():
        shared.setdefault(name, set()).add(ident[k])
    return {k: name if len(shared[name]) == 1 else f"{name}#{hashlib.sha256(ident[k].encode()).hexdigest()[:6]}"
            for k, name in base.items()}


def unit_of(r: Result, fp: dict | None, host: str | None = None) -> tuple[str, str]:
    """(kind, name) of what a result measured: ('gpu', 'host/cuda:0') or ('link', 'hostA+hostB x16');
    ``host``: the host's name from host_names (else its hostname)."""
    host = host or _host(r, fp)
    gpus = r.gpus
    if gpus > 1:
        hosts = sorted({str(p.get("host")) for p in r.extra.per_rank or [] if p.get("host")})
        return "link", f"{'+'.join(hosts) if hosts else host} x{gpus}"
    dev = str(r.device or "cuda:0")
    idx = int(dev.split(":")[1]) if ":" in dev and dev.split(":")[1].isdigit() else 0
    uuid = next((g.get("uuid") for g in (fp or {}).get("gpus") or [] if g.get("index") == idx), None)
    return "gpu", f"{host}/{dev if ':' in dev else dev + ':0'}" + (f" ({uuid[:12]})" if uuid else "")


def case_of(r: Result) -> str:
    """What makes two results comparable: the GPU model, workload, variant, parameters, size, GPU count
    (a fleet of two GPU models is two fleets: an A100 is not an outlier among H100s)."""
    return f"{r.device_name}: {r.workload} {r.variant} " \
           f"{json.dumps(r.params, sort_keys=True)} {r.size} x{r.gpus}"


def figure(r: Result) -> tuple[float, str | None]:
    """A result's figure as people read it: a matmul's TFLOP/s, else its throughput in its unit."""
    if registry.has(r.workload, device_figure="compute-peak") and r.tflops:
        return r.tflops, "TFLOP/s"
    return r.throughput_median, r.unit


def robust(values: list[float]) -> tuple[float, float]:
    """(median, scaled MAD)."""
    m = statistics.median(values)
    return m, MAD_SCALE * statistics.median(abs(v - m) for v in values)


def outliers(figures: dict[str, float], z: float = Z, practical: float = PRACTICAL) -> dict[str, dict]:
    """Per unit: {value, ratio, z, outlier} against the median of ``figures`` (unit -> figure)."""
    if not figures:
        return {}
    m, mad = robust(list(figures.values()))
    out = {}
    for unit, v in figures.items():
        score = (v - m) / mad if mad > 0 else (0.0 if v == m else float("-inf") if v < m else float("inf"))
        ratio = v / m if m else float("nan")
        out[unit] = {"value": v, "ratio": ratio, "z": score if abs(score) != float("inf") else None,
                     "outlier": len(figures) >= 3 and score < -z and ratio < 1 - practical}
    return out


def analyse(results: list[Result], environment=lambda env_id: None) -> Fleet:
    """The fleet: per case its median, spread and outliers; the units and cases missing."""
    cases: dict[str, dict] = {}
    hosts: set[str] = set()
    fps: dict = {}
    for r in results:
        if r.env_id not in fps:
            fps[r.env_id] = environment(r.env_id) if r.env_id is not None else None
    names = host_names(fps, {r.env_id: r.extra.host for r in results if r.extra.host})
    for r in results:
        if r.status != "ok" or not r.throughput_median or r.source == "published":
            continue
        eid = r.env_id
        kind, unit = unit_of(r, fps[eid], names[eid])
        hosts.add(names[eid])
        c = cases.setdefault(case_of(r), {"case": case_of(r), "gpu": r.device_name,
                                          "workload": r.workload, "variant": r.variant,
                                          "params": r.params, "kind": kind, "unit": figure(r)[1],
                                          "values": {}, "hosts": set()})
        c["values"].setdefault(unit, []).append(figure(r)[0])
        c["hosts"].add(names[eid])
    out = []
    for c in cases.values():
        figures = {u: statistics.median(v) for u, v in c["values"].items()}
        m, mad = robust(list(figures.values()))
        units = outliers(figures)
        out.append({"case": c["case"], "gpu": c["gpu"], "workload": c["workload"], "variant": c["variant"],
                    "params": c["params"],
                    "kind": c["kind"], "unit": c["unit"], "n": len(figures), "median": m, "mad": mad,
                    "units": units, "flagged": sorted(u for u, x in units.items() if x["outlier"]),
                    "missing_hosts": sorted(hosts - c["hosts"])})
    out.sort(key=lambda c: (c["kind"], str(c["gpu"]), c["workload"], c["case"]))
    return Fleet(hosts=sorted(hosts), cases=out,
                 flagged_gpus=sorted({u for c in out if c["kind"] == "gpu" for u in c["flagged"]}),
                 flagged_links=sorted({u for c in out if c["kind"] == "link" for u in c["flagged"]}),
                 incomplete={c["case"]: c["missing_hosts"] for c in out if c["missing_hosts"]})
