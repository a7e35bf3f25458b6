"""Why a GPU might be slow, read from what a run already recorded.

The environment fingerprint (measure/env.py: power limit, clocks, PCIe link,
MIG, ECC errors, other processes, the CPU governor, NUMA placement) and the
result's own telemetry (throttle reasons seen during the timed windows) are
enough to name the usual culprits.  Each cause is one plain sentence; a
reading that was not recorded (no NVML, an older gpuarena) names nothing.
"""

from __future__ import annotations

from gpuarena.measure.telemetry import THROTTLE_BITS
from gpuarena.store.result import Result

APP_CLOCKS_BIT = 0x2          # nvmlClocksEventReasonApplicationsClocksSetting: clocks held by a setting
POWER_SHORT = 0.97            # a power limit this far under the card's TDP is a cap someone set
CLOCK_SHORT = 0.95            # an applications clock this far under the maximum caps the SMs


def gpu_indices(result: Result) -> list[int]:
    """The GPU indices a result ran on: cuda:N for one GPU, 0..gpus-1 for a multi-GPU case."""
    dev = str(result.device or "")
    if result.gpus > 1:
        return list(range(result.gpus))
    if dev.startswith("cuda"):
        tail = dev.split(":", 1)[1] if ":" in dev else "0"
        return [int(tail)] if tail.isdigit() else [0]
    return []


def _by_index(entries) -> dict[int, dict]:
    return {e.get("index"): e for e in entries or [] if isinstance(e, dict)}


def _reasons(result: Result) -> set[str]:
    names = set(result.extra.throttle_reasons or [])
    bits = 0
    for s in result.telemetry or []:
        bits |= s.reasons or 0
    names |= {name for bit, name in THROTTLE_BITS.items() if bits & bit}
    if bits & APP_CLOCKS_BIT:
        names.add("applications_clocks_setting")
    return names


def gpu_causes(static: dict, vol: dict, tdp_w: float | None, card_pcie_gen: float | None) -> list[str]:
    """The causes one GPU's recorded state shows."""
    out = []
    limit = static.get("power_limit_w")
    full = tdp_w or static.get("power_default_limit_w")
    if limit and full and limit < POWER_SHORT * full:
        out.append(f"power limit {limit:.0f} W, below the card's {full:.0f} W")
    app, top = vol.get("app_sm_clock_mhz"), static.get("sm_clock_max_mhz")
    if app and top and app < CLOCK_SHORT * top:
        out.append(f"SM clocks capped at {app:.0f} MHz (maximum {top:.0f} MHz)")
    gen, width = static.get("pcie_gen"), static.get("pcie_width")
    gen_max = max(x for x in (static.get("pcie_gen_max"), card_pcie_gen) if x) if (
        static.get("pcie_gen_max") or card_pcie_gen) else None
    width_max = static.get("pcie_width_max")
    if (gen and gen_max and gen < gen_max) or (width and width_max and width < width_max):
        out.append(f"PCIe link gen {gen} x{width}, below the card's gen {gen_max:g} x{width_max} "
                   "(read at the run's start; an idle link may train down)")
    if vol.get("ecc_uncorrected"):
        out.append(f"{vol['ecc_uncorrected']} uncorrected ECC error(s) since the driver loaded")
    elif (vol.get("ecc_corrected") or 0) > 0:
        out.append(f"{vol['ecc_corrected']} corrected ECC error(s) since the driver loaded")
    if static.get("mig_mode") == 1:
        out.append("MIG enabled: the GPU is partitioned")
    if vol.get("other_processes"):
        out.append(f"{vol['other_processes']} other process(es) on the GPU")
    return out


def host_causes(fp: dict, numa_nodes: set) -> list[str]:
    host = fp.get("host_volatile") or {}
    out = []
    gov = host.get("cpu_governor")
    if gov and gov != "performance":
        out.append(f"CPU frequency governor '{gov}' (not 'performance')")
    per_node = host.get("allowed_cpus_per_numa_node") or {}
    far = sorted(n for n in numa_nodes if n is not None and n >= 0 and per_node.get(str(n)) == 0)
    if far:
        out.append(f"the process may run on no CPU of NUMA node {', '.join(map(str, far))}, "
                   "where the GPU sits")
    return out


def causes(result: Result, fp: dict | None, tdp_w: float | None = None,
           card_pcie_gen: float | None = None) -> list[str]:
    """The likely causes of a slow result, from its fingerprint and telemetry (deduplicated, in order)."""
    out = [f"throttled during the run ({', '.join(sorted(_reasons(result)))})"] if _reasons(result) else []
    if fp:
        static, vol = _by_index(fp.get("gpus")), _by_index(fp.get("gpus_volatile"))
        nodes = set()
        for i in gpu_indices(result):
            for c in gpu_causes(static.get(i) or {}, vol.get(i) or {}, tdp_w, card_pcie_gen):
                out.append(c if len(gpu_indices(result)) == 1 else f"GPU {i}: {c}")
            nodes.add((vol.get(i) or {}).get("numa_node"))
        out += host_causes(fp, nodes)
    return list(dict.fromkeys(out))
