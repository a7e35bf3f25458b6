"""The environment fingerprint: what a result was measured on.

Stored once per distinct environment and linked from every result, so that
results from different machines are never mixed up (pyperf's and asv's habit).
Volatile readings (current clocks, temperature) are kept out of the hash.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import os
import platform
import re
import socket
import subprocess

from gpuarena.measure.telemetry import _nvml

LIBRARIES = ("torch", "torchvision", "transformers", "diffusers", "numpy", "nvidia-ml-py", "gpuarena")
VOLATILE = {"collected_at", "gpus_volatile", "host_volatile"}


def _version(pkg: str):
    try:
        return md.version(pkg)
    except md.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _field_uint(nv, handle, field_id: int) -> int:
    """One NVML field value (nvmlDeviceGetFieldValues), raising if the driver has none."""
    value = nv.nvmlDeviceGetFieldValues(handle, [field_id])[0]
    if value.nvmlReturn != nv.NVML_SUCCESS:
        raise RuntimeError(f"NVML field {field_id}: error {value.nvmlReturn}")
    return int(value.value.uiVal)


def _gpus() -> tuple[list[dict], list[dict]]:
    """Static facts per GPU (hashed) and volatile readings (not hashed)."""
    static, volatile = [], []
    nv = _nvml()
    if nv is None:
        return static, volatile
    try:
        count = nv.nvmlDeviceGetCount()
    except Exception:
        return static, volatile
    for i in range(count):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        g: dict = {"index": i}

        def get(key, fn, store=g):
            try:
                v = fn()
                store[key] = v.decode() if isinstance(v, bytes) else v
            except Exception:
                store[key] = None

        get("name", lambda: nv.nvmlDeviceGetName(h))
        get("uuid", lambda: nv.nvmlDeviceGetUUID(h))
        _identity(nv, h, get)
        get("memory_bytes", lambda: nv.nvmlDeviceGetMemoryInfo(h).total)
        get("power_limit_w", lambda: nv.nvmlDeviceGetPowerManagementLimit(h) / 1e3)
        get("power_default_limit_w", lambda: nv.nvmlDeviceGetPowerManagementDefaultLimit(h) / 1e3)
        get("sm_clock_max_mhz", lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM))
        get("mem_clock_max_mhz", lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_MEM))
        get("pcie_gen_max", lambda: nv.nvmlDeviceGetMaxPcieLinkGeneration(h))
        get("pcie_width_max", lambda: nv.nvmlDeviceGetMaxPcieLinkWidth(h))
        get("pcie_gen", lambda: nv.nvmlDeviceGetCurrPcieLinkGeneration(h))
        get("pcie_width", lambda: nv.nvmlDeviceGetCurrPcieLinkWidth(h))
        get("persistence_mode", lambda: nv.nvmlDeviceGetPersistenceMode(h))
        get("compute_mode", lambda: nv.nvmlDeviceGetComputeMode(h))
        get("mig_mode", lambda: nv.nvmlDeviceGetMigMode(h)[0])
        links = []
        for link in range(18):  # NVML_NVLINK_MAX_LINKS
            try:
                if nv.nvmlDeviceGetNvLinkState(h, link):
                    entry = {"link": link}
                    try:
                        entry["version"] = nv.nvmlDeviceGetNvLinkVersion(h, link)
                    except Exception:
                        pass
                    links.append(entry)
            except Exception:
                break
        g["nvlink_links_active"] = len(links)
        if links:  # the links' common speed (MB/s, per direction), where the driver reports it
            get("nvlink_speed_mbps", lambda: _field_uint(nv, h, nv.NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON))
        g["nvlink"] = links
        static.append(g)
        vol: dict = {"index": i}
        get("sm_clock_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM), vol)
        get("temp_c", lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU), vol)
        get("memory_used_bytes", lambda: nv.nvmlDeviceGetMemoryInfo(h).used, vol)
        _health(nv, h, get, vol)
        volatile.append(vol)
    return static, volatile


def _identity(nv, h, get) -> None:
    """What names this board to its provider: its serial (as on its label), VBIOS, PCI bus id."""
    get("serial", lambda: nv.nvmlDeviceGetSerial(h))
    get("vbios", lambda: nv.nvmlDeviceGetVbiosVersion(h))
    get("pci_bus_id", lambda: nv.nvmlDeviceGetPciInfo(h).busId)


def _health(nv, h, get, vol: dict) -> None:
    """Readings that explain a slow GPU (analysis/verbs/expected.py names them as causes): the SM clock
    the applications clocks allow, ECC errors since the driver loaded, other processes on the GPU,
    the GPU's NUMA node.  Each is one NVML or sysfs read; an unsupported one is None."""
    get("app_sm_clock_mhz", lambda: nv.nvmlDeviceGetApplicationsClock(h, nv.NVML_CLOCK_SM), vol)
    get("ecc_uncorrected", lambda: nv.nvmlDeviceGetTotalEccErrors(
        h, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nv.NVML_VOLATILE_ECC), vol)
    get("ecc_corrected", lambda: nv.nvmlDeviceGetTotalEccErrors(
        h, nv.NVML_MEMORY_ERROR_TYPE_CORRECTED, nv.NVML_VOLATILE_ECC), vol)
    get("other_processes", lambda: len({p.pid for p in nv.nvmlDeviceGetComputeRunningProcesses(h)}
                                       - {os.getpid()}), vol)
    get("numa_node", lambda: _numa_node(nv.nvmlDeviceGetPciInfo(h).busId), vol)


def _numa_node(bus_id) -> int | None:
    bus = (bus_id.decode() if isinstance(bus_id, bytes) else str(bus_id)).lower()
    bus = bus[4:] if len(bus.split(":")[0]) == 8 else bus     # NVML: 00000000:18:00.0 -> 0000:18:00.0
    try:
        with open(f"/sys/bus/pci/devices/{bus}/numa_node") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _cpulist(text: str | None) -> set[int]:
    """'0-3,8,10-11' -> {0, 1, 2, 3, 8, 10, 11}."""
    out: set[int] = set()
    for part in (text or "").split(","):
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.update(range(int(lo), int(hi) + 1))
        elif part.strip().isdigit():
            out.add(int(part))
    return out


def host_health() -> dict:
    """The host's side of a slow GPU: the CPU frequency governor and, per NUMA node, how many of the
    CPUs this process may run on belong to it (a GPU whose node has none is fed across the socket)."""
    out: dict = {"cpu_governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")}
    try:
        allowed = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return out
    out["cpus_allowed"] = len(allowed)
    nodes = {}
    for path in sorted(os.listdir("/sys/devices/system/node")) if os.path.isdir("/sys/devices/system/node") else []:
        if re.fullmatch(r"node\d+", path):
            cpus = _cpulist(_read(f"/sys/devices/system/node/{path}/cpulist"))
            nodes[path[4:]] = len(cpus & allowed)
    out["allowed_cpus_per_numa_node"] = nodes
    return out


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")   # nvidia-smi underlines its table header


def _smi(*args: str) -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=20)
        return ANSI.sub("", out.stdout).strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _topology() -> str | None:
    """`nvidia-smi topo -m`, when there is more than one GPU to relate."""
    return _smi("topo", "-m")


def nvlink_gbs(status: str) -> dict[int, float]:
    """Per GPU, the sum of its links' speeds (GB/s, one direction) from `nvidia-smi nvlink -s`
    ("GPU 0: ..." then "Link 0: 26.562 GB/s" lines); NVML's common-speed field is empty on some drivers."""
    totals: dict[int, float] = {}
    gpu = None
    for line in status.splitlines():
        m = re.match(r"\s*GPU (\d+):", line)
        if m:
            gpu = int(m.group(1))
            continue
        m = re.match(r"\s*Link \d+: ([0-9.]+) GB/s", line)
        if m and gpu is not None:
            totals[gpu] = totals.get(gpu, 0.0) + float(m.group(1))
    return {g: round(v, 3) for g, v in totals.items()}


def fingerprint(with_topology: bool = True) -> dict:
    """Collect the fingerprint of this machine.  Cheap enough to run before every suite."""
    import datetime as dt

    fp: dict = {
        "hostname": socket.gethostname(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "libraries": {name: _version(name) for name in LIBRARIES},
    }
    try:
        import torch

        fp["torch_cuda"] = torch.version.cuda
        fp["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        fp["cuda_available"] = torch.cuda.is_available()
        fp["torch_threads"] = torch.get_num_threads()
        if torch.cuda.is_available():
            fp["cuda_devices"] = [
                {"name": torch.cuda.get_device_name(i),
                 "capability": ".".join(map(str, torch.cuda.get_device_capability(i))),
                 "memory_bytes": torch.cuda.get_device_properties(i).total_memory,
                 "sm_count": torch.cuda.get_device_properties(i).multi_processor_count}
                for i in range(torch.cuda.device_count())
            ]
    except Exception as exc:  # torch missing or broken: say so, do not invent
        fp["torch_error"] = repr(exc)
    gpus, vol = _gpus()
    fp["gpus"] = gpus
    fp["gpu_count"] = len(gpus)
    fp["gpu_name"] = gpus[0]["name"] if gpus else None
    nv = _nvml()
    if nv is not None:
        try:
            v = nv.nvmlSystemGetDriverVersion()
            fp["driver"] = v.decode() if isinstance(v, bytes) else v
        except Exception:
            fp["driver"] = None
    if with_topology and len(gpus) > 1:
        fp["topology"] = _topology()
    if with_topology and any(g.get("nvlink_links_active") for g in gpus):
        status = _smi("nvlink", "-s")
        fp["nvlink_status"] = status
        for i, total in nvlink_gbs(status or "").items():
            for g in gpus:
                if g.get("index") == i:
                    g["nvlink_gbs_per_direction"] = total
    fp["gpus_volatile"] = vol
    fp["host_volatile"] = host_health()
    fp["collected_at"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    return fp


def fingerprint_hash(fp: dict) -> str:
    stable = {k: v for k, v in fp.items() if k not in VOLATILE}
    return hashlib.sha256(json.dumps(stable, sort_keys=True, default=str).encode()).hexdigest()[:16]


def device_name(fp: dict, device: str) -> str:
    """Human name of the device a case ran on: the GPU's name, or the CPU model."""
    if device.startswith("cuda"):
        idx = int(device.split(":")[1]) if ":" in device else 0
        devs = fp.get("cuda_devices") or []
        if idx < len(devs):
            return devs[idx]["name"]
        return fp.get("gpu_name") or "cuda"
    return f"CPU: {fp.get('cpu')}"
