"""`gpuarena doctor` as text: one line per check of every GPU (its figure in TFLOP/s or GB/s, against
the expected figure and the host's other GPUs), the acceptance checks (results checked, memory
tested, burn-in), one line per pair of GPUs, and each GPU's verdict below with its reasons."""

from __future__ import annotations

from gpuarena.analysis.verbs.doctor import BurnInBrief, Doctor, GpuCheck
from gpuarena.numbers import fmt_num
from gpuarena.report.text.table import as_json, render as table

COLUMNS = [("gpu", "GPU"), ("check", "check"), ("value", "figure"), ("expected", "vs expected"),
           ("peers", "vs host's GPUs"), ("flag", "flag")]
PAIR_COLUMNS = [("pair", "pair"), ("connection", "link"), ("value", "GB/s"), ("expected", "vs link rate"),
                ("verdict", "verdict")]


def _expected(c: GpuCheck) -> str:
    if not c.expected:
        return "-"
    text = f"{c.vs_expected:.2f}x of {fmt_num(c.expected)} ({c.basis})"
    return text + (f"; {c.basis_note}" if c.basis_note else "")


def _rows(v: Doctor) -> list[dict]:
    rows = []
    for g in v.gpus:
        for c in g.checks:
            rows.append({"gpu": g.device, "check": c.check,
                         "value": f"{fmt_num(c.value)} {c.unit or ''}" if c.value else c.status,
                         "expected": _expected(c),
                         "peers": f"{c.vs_peers:.2f}x" if c.vs_peers is not None else "-",
                         "flag": "below-expected" if c.below else "slow-vs-peers" if c.peer_slow else ""})
        a = g.acceptance
        if a:
            rows.append({"gpu": g.device, "check": "GEMM results vs exact reference",
                         "value": f"{a.gemm_results_checked:,} checked", "expected": "-", "peers": "-",
                         "flag": "WRONG" if any("GEMM" in w for w in g.why) else ""})
            if a.memtest_gb is not None:
                rows.append({"gpu": g.device, "check": "memory test, 4 patterns",
                             "value": (f"{a.memtest_gb:,.1f} GB" if a.memtest_gb >= 1
                                       else f"{a.memtest_gb * 1e3:,.1f} MB"), "expected": "-", "peers": "-",
                             "flag": "WRONG" if any("memory test" in w for w in g.why) else ""})
            b = a.burn_in
            if b and b.sustained_tflops:
                rows.append({"gpu": g.device, "check": f"burn-in {b.seconds / 60:g} min, BF16 GEMM + copy",
                             "value": f"{fmt_num(b.sustained_tflops)} TFLOP/s sustained, "
                                      f"{fmt_num(b.sustained_copy_gbs)} GB/s copy",
                             "expected": f"{b.sustained_to_burst:.2f}x of burst {fmt_num(b.burst_tflops)}; "
                                         + _throttle(b),
                             "peers": "-", "flag": ""})
    for link in v.links:
        rows.append({"gpu": "all", "check": link.check, "value": (f"{fmt_num(link.busbw_gbs)} GB/s bus"
                     if link.busbw_gbs else link.status), "expected": "-", "peers": "-", "flag": ""})
    return rows


def _throttle(b: BurnInBrief) -> str:
    """'first throttle at 1.5 s (sw_power_cap 1.5 s, sw_thermal 84 s)', or why there is none."""
    if b.first_throttle_s is None:
        return "no throttle seen" if "throttle_first_seen_s" in b.model_fields_set else "throttle not sampled"
    seen = sorted((b.throttle_first_seen_s or {}).items(), key=lambda kv: kv[1])
    return f"first throttle at {b.first_throttle_s:g} s (" + ", ".join(f"{k} {t:g} s" for k, t in seen) + ")"


def _pairs(v: Doctor) -> list[dict]:
    return [{"pair": p.pair, "connection": p.connection or "?", "value": fmt_num(p.gbs),
             "expected": (f"{p.ratio:.2f}x of {fmt_num(p.expected_gbs)}" if p.ratio is not None else "-"),
             "verdict": p.verdict + (f" -- {'; '.join(p.why)}" if p.why else "")}
            for p in v.pairs]


def render(v: Doctor, fmt: str) -> str:
    """The verdicts doctor's analysis returns (analysis.doctor.verdicts) as text."""
    if fmt == "json":
        return as_json(v)
    rows = _rows(v)
    cols = [c for c in COLUMNS if c[0] in ("gpu", "check", "value") or any(r[c[0]] not in ("-", "") for r in rows)]
    notes = [f"{g.device} ({g.name or '?'}): {g.verdict}" + (f" -- {'; '.join(g.why)}" if g.why else "")
             for g in v.gpus]
    notes += sorted({n for g in v.gpus for n in g.notes or []})
    if v.pairs_skipped:
        notes.append(f"links: skipped ({v.pairs_skipped})")
    if v.tiny:
        notes.append("tiny sizes on a CPU: these checks prove the install works, not how fast anything is")
    notes.append("exit code 0: every GPU and link OK or CHECK; 1: one SLOW, WRONG or FAIL")
    level = f" ({v.level})" if v.level else ""
    text = table(cols, rows, fmt, title=f"gpuarena doctor{level}: {v.verdict}", notes=notes)
    if v.pairs:
        text += table(PAIR_COLUMNS, _pairs(v), fmt, title="Links: peer copy per pair of GPUs")
    return text
