"""Verdicts on doctor's acceptance evidence (runner/acceptance.py returns it): is each GPU's
arithmetic right, its memory sound, its error log clean, its sustained speed held, and each link
between GPUs as fast as its kind of link should be?

Per GPU, the reasons and their weight:

- WRONG: a GEMM result that differs from the exact reference (quick check or burn-in), an FP64
  reference the CPU disagrees with, a memory word that read back wrong, an XID event during the
  checks, an uncorrectable ECC error, a row remapped for an uncorrectable error, a remap that failed,
  a page retired for a double-bit error (counters read from NVML before and after);
- FAIL: a check that did not complete (an exception: out of memory, a driver error);
- SLOW: at burn-in, a clock-event reason that means heat or power delivery (thermal slowdown,
  hardware slowdown, power brake) or a sustained speed under SUSTAINED_FLOOR (0.75) of the burst;
- CHECK: a correctable error counted or a row remap pending (the card corrected it; a reset applies
  the remap): worth a look, not a fault;
- notes: the power cap reached under load (0x4, sw_power_cap: an H100/H200 at its 700 W limit under
  dense GEMMs is working as designed), readings NVML does not give on this host.

Per pair of GPUs, the link's raw rate per direction from what the host reports: `nvidia-smi topo -m`
names the connection (NV# for # NVLinks, else a PCIe path); an NVLink's rate is # x the GPU's per-link
rate (the fingerprint's nvlink_gbs_per_direction / nvlink_links_active), a PCIe path's the slower
end's PCIe link at the generation and width NVML says the device and slot allow (data/pcie_links.csv).
A pair is SLOW under LINK_FLOOR of that rate, or an outlier among the host's pairs of the same
connection (analysis/verbs/fleet.py's rule).  A healthy copy moves 0.78-0.88x of the raw rate: an HGX H100's
unidirectional peer copies ran at 371-377 GB/s over NV18 (18 x 26.6 = 478 GB/s; p2pBandwidthLatencyTest
in NVIDIA/nccl issue #1264), gpuarena's H200 moved 55.4 GB/s pinned over PCIe Gen5 x16 (63 GB/s; run
20261129-151415-f3a8c6).  A link at half its width or one generation down lands under 0.5.
"""

from __future__ import annotations

import re

from gpuarena.analysis.rows.verdict import Health
from gpuarena.analysis.verbs import fleet as F
from gpuarena.analysis.physics.interconnect import pcie_links

# sustained/burst: a healthy H200 holds 0.88 under dense BF16 GEMMs at its power cap (677.4 TFLOP/s sustained
# at 687 W against a 773.3 burst: runs 20261129-151415-f3a8c6, 20261129-181742-380252, BENCHMARKS.md
# 'Ceilings'); under 0.75 (that less the 13% expected_device.SUSTAINED_SPREAD allows) is more than the cap
SUSTAINED_FLOOR = 0.75
LINK_FLOOR = 0.5         # measured / raw link rate
SLOWING = ("sw_thermal", "hw_thermal", "hw_slowdown", "hw_power_brake")
WRONG_COUNTERS = {"ecc_uncorrected": "uncorrectable ECC errors", "rows_remapped_uncorrected":
                  "rows remapped for uncorrectable errors", "row_remap_failed": "a row remap failed",
                  "retired_pages_dbe": "pages retired for double-bit errors"}
CHECK_COUNTERS = {"ecc_corrected": "correctable ECC errors", "rows_remapped_corrected":
                  "rows remapped for correctable errors", "row_remap_pending": "a row remap pending (reset to apply)",
                  "retired_pages_sbe": "pages retired for single-bit errors"}


def _gemm_reasons(checks: list[dict], where: str) -> list[str]:
    out = []
    for g in checks:
        if g.get("bad_results"):
            out.append(f"{where}GEMM {g['dtype']}: {g['bad_results']} of {g['results']} results wrong "
                       f"({g['bad_elements']:,} elements differ from the exact reference)")
        if g.get("reference_ok") is False:
            out.append(f"{where}GEMM {g['dtype']}: the FP64 reference differs from the CPU's rows")
    return out


def gpu(e: dict, tiny: bool) -> dict:
    """{wrong, fail, slow, check, notes}: lists of reasons for one GPU's evidence."""
    wrong = _gemm_reasons(e.get("gemm") or [], "")
    fail, slow, check, notes = [], [], [], []
    if e.get("error"):
        fail.append(f"acceptance check failed: {e['error']}")
    m = e.get("memtest") or {}
    if m.get("bad_words"):
        wrong.append(f"memory test: {m['bad_words']:,} words read back wrong "
                     f"over {m['bytes_tested'] / 1e9:,.1f} GB x {m['passes']} patterns")
    if e.get("xid"):
        wrong.append("XID event(s) during the checks: " + ", ".join(map(str, e["xid"])))
    for k, v in (e.get("counter_changes") or {}).items():
        text = f"+{v}" if not isinstance(v, bool) else "now"
        if k in WRONG_COUNTERS:
            wrong.append(f"{WRONG_COUNTERS[k]} during the checks ({text})")
        elif k in CHECK_COUNTERS:
            check.append(f"{CHECK_COUNTERS[k]} during the checks ({text})")
    before = e.get("counters_before") or {}
    if before.get("available") is False:
        notes.append(before.get("why"))
    elif before.get("row_remap_failed"):
        wrong.append("a row remap had failed before the checks (no spare rows left)")
    b = e.get("burn_in") or {}
    if b.get("error"):
        fail.append(f"burn-in failed: {b['error']}")
    wrong += _gemm_reasons([b["correctness"]] if b.get("correctness") else [], "burn-in ")
    firsts = b.get("throttle_first_seen_s") or {}
    for reason in SLOWING:
        if reason in firsts:
            slow.append(f"burn-in: {reason} from {firsts[reason]:g} s")
    if "sw_power_cap" in firsts:
        notes.append(f"burn-in: power cap reached at {firsts['sw_power_cap']:g} s (by design under dense GEMMs)")
    ratio = b.get("sustained_to_burst")
    if ratio is not None and not tiny and ratio < SUSTAINED_FLOOR:
        slow.append(f"burn-in: sustained {b['sustained_tflops']:,.0f} TFLOP/s is {ratio:.2f}x the burst "
                    f"{b['burst_tflops']:,.0f} (under {SUSTAINED_FLOOR:.2f})")
    if b.get("telemetry") and isinstance(b["telemetry"], str):
        notes.append(b["telemetry"])
    return {"wrong": wrong, "fail": fail, "slow": slow, "check": check, "notes": [n for n in notes if n]}


# --- links ---------------------------------------------------------------------

def topology(text: str | None) -> dict[tuple[int, int], str]:
    """`nvidia-smi topo -m` -> {(i, j): "NV18" | "PIX" | "SYS" ...} for the GPU columns."""
    out: dict[tuple[int, int], str] = {}
    header: list[int] = []
    for line in (text or "").splitlines():
        cells = line.split()
        if not header and cells and all(re.fullmatch(r"GPU\d+", c) for c in cells[:2]):
            header = [int(c[3:]) for c in cells if re.fullmatch(r"GPU\d+", c)]
            continue
        m = re.match(r"GPU(\d+)$", cells[0]) if cells else None
        if header and m:
            for j, cell in zip(header, cells[1:1 + len(header)]):
                out[(int(m.group(1)), j)] = cell
    return out


def _pcie_gbs(g: dict) -> float | None:
    gen, width = g.get("pcie_gen_max"), g.get("pcie_width_max")
    rate = pcie_links().get(gen, (None,))[0] if gen else None
    return rate * width / 16 if rate and width else None


def link_expected(fp: dict | None, src: int, dst: int) -> dict:
    """{connection, raw_gbs, how} of one pair from the fingerprint; raw_gbs None where it cannot say."""
    gpus = {g.get("index"): g for g in (fp or {}).get("gpus") or []}
    conn = topology((fp or {}).get("topology")).get((src, dst))
    a, b = gpus.get(src) or {}, gpus.get(dst) or {}
    if conn and conn.startswith("NV") and conn[2:].isdigit():
        per_link = [g["nvlink_gbs_per_direction"] / g["nvlink_links_active"] for g in (a, b)
                    if g.get("nvlink_gbs_per_direction") and g.get("nvlink_links_active")]
        if per_link:
            return {"connection": conn, "raw_gbs": int(conn[2:]) * min(per_link),
                    "how": f"{conn[2:]} NVLinks x {min(per_link):.1f} GB/s per direction (nvidia-smi nvlink -s)"}
        return {"connection": conn, "raw_gbs": None, "how": "NVLink rate per link not reported"}
    rates = [r for r in (_pcie_gbs(a), _pcie_gbs(b)) if r]
    if rates:
        return {"connection": conn or "PCIe", "raw_gbs": min(rates),
                "how": "PCIe at the generation and width NVML allows the slower end (data/pcie_links.csv)"}
    return {"connection": conn, "raw_gbs": None, "how": "no link rate in the fingerprint (no NVML, no topology)"}


def links(evidence: dict, fp: dict | None) -> list[dict]:
    """One verdict per measured pair: {pair, connection, gbs, expected_gbs, ratio, verdict, why}."""
    pairs = evidence.get("pairs") or []
    out = []
    for p in pairs:
        e = link_expected(fp, p["src"], p["dst"])
        why = []
        ratio = p["gbs"] / e["raw_gbs"] if e["raw_gbs"] else None
        if ratio is not None and ratio < LINK_FLOOR:
            why.append(f"{p['gbs']:,.0f} GB/s is {ratio:.2f}x the link's {e['raw_gbs']:,.0f} GB/s "
                       f"({e['how']}), under {LINK_FLOOR:.2f}")
        if not p.get("peer_access") and str(e["connection"] or "").startswith("NV"):
            why.append("no peer access over an NVLink connection: copies staged through the host")
        out.append({"pair": f"cuda:{p['src']}->cuda:{p['dst']}", "connection": e["connection"], "gbs": p["gbs"],
                    "expected_gbs": e["raw_gbs"], "expected_how": e["how"], "ratio": ratio,
                    "peer_access": p.get("peer_access"), "why": why})
    for conn in {x["connection"] for x in out}:
        same = {x["pair"]: x["gbs"] for x in out if x["connection"] == conn}
        for name, o in F.outliers(same).items():
            if o["outlier"]:
                x = next(x for x in out if x["pair"] == name)
                x["why"].append(f"{o['ratio']:.2f}x the median of the host's {len(same)} {conn} pairs")
    for x in out:
        x["verdict"] = Health.SLOW if x["why"] else Health.OK
    return out
