"""The report's "Is it normal?" section: each result beside its expected figure (analysis/verbs/expected.py),
and where the results come from several GPUs or hosts, the fleet's outliers (analysis/verbs/fleet.py) with a
chart of the slowest GPU or link of each case against the fleet's median."""

from __future__ import annotations

from gpuarena.analysis.verbs import expected as E
from gpuarena.analysis.verbs import fleet as F
from gpuarena.report.chartspec import BarGroup
from gpuarena.report.model import MAX_ROWS, NUMERIC, PROSE, TEXT, Chart, Section, Table, device_of
from gpuarena.numbers import fmt_num
from gpuarena.report.text.fleet import case_label
from gpuarena.store.result import Result
from gpuarena.workloads import registry

GAPS_SHOWN = 10   # incomplete cases the report names; the CLI lists them all


def variant_text(r: Result) -> str:
    """The variant, with what sets a device check apart (a matmul's dtype, a copy's pinning) where it has one."""
    cls = registry.find(r.workload)
    label = cls.label(r.params) if cls is not None else r.workload
    extra = label[len(r.workload):].strip() if label.startswith(r.workload) else label
    if r.gpus > 1 and r.params.get("size_mb"):          # a collective: its message size
        extra = f"{r.params['size_mb']:g} MiB"
    return f"{r.variant} ({extra})" if extra else r.variant


def expected_table(rows: list[Result]) -> Table | None:
    out = []
    for r in rows:
        e = r.derived.expected
        if not e:
            continue
        unit = e.unit or r.unit or ""        # a device check is read in its figure's unit (TFLOP/s, bus GB/s)
        measured = e.ratio * e.figure if e.ratio is not None else r.throughput_median
        out.append([r.workload, variant_text(r), device_of(r), f"{fmt_num(measured)} {unit}",
                    f"{fmt_num(e.figure)} ({fmt_num(e.low)}-{fmt_num(e.high)})", f"{e.ratio:.2f}x", e.basis,
                    "below-expected: " + ("; ".join(e.causes or []) or "no cause recorded") if e.below
                    else ("" if e.like_for_like else "context"), e.source or e.model.how])
    if not out:
        return None
    return Table("expected-table", [("workload", TEXT), ("variant", TEXT), ("GPU", TEXT), ("measured", NUMERIC),
                                    ("expected (range)", NUMERIC), ("ratio", NUMERIC), ("basis", TEXT),
                                    ("flag", PROSE), ("source", PROSE)], out, "Measured against expected",
                 "Expected: the same recipe stored on the same GPU, else the best like-for-like published figure "
                 "(same precision and settings), else the model: gpuarena's projection from the same recipe on "
                 "other GPUs, or the workload's physics (roofline, serving, training, data-parallel); a device "
                 "check (matmul TFLOP/s, copy and host-link GB/s, collective bus GB/s) against the catalog's "
                 "bound x the share healthy cards reach. The range is what a healthy result falls in; only a "
                 "like-for-like figure can flag a result (else: context).",
                 details=("basis", "source"))


def fleet_subsection(rows: list[Result], environment) -> Section | None:
    fleet = F.analyse(rows, environment)
    cases = [c for c in fleet.cases if c.n >= 3]
    if not cases:
        return None
    s = Section("fleet", "Fleet: each GPU and link against the median")
    s.paragraphs.append(f"{len(fleet.hosts)} host(s). A GPU or link is flagged when it is more than "
                        f"{F.Z:g} scaled MADs and {F.PRACTICAL:.0%} below its case's median.")
    flagged = [[case_label(c), u, f"{fmt_num(c.units[u].value)} {c.unit or ''}", f"{c.units[u].ratio:.3f}", str(c.n)]
               for c in cases for u in c.flagged]
    s.tables.append(Table("fleet-table", [("case", TEXT), ("GPU or link", TEXT), ("figure", NUMERIC),
                                          ("vs median", NUMERIC), ("fleet", NUMERIC)],
                          flagged or [["-", "no outlier", "-", "-", "-"]], "Outliers"))
    labels = [case_label(c)[:50] for c in cases]
    slowest = [min(x.ratio for x in c.units.values()) for c in cases]
    s.charts.append(Chart("fleet-chart", "Slowest GPU or link of each case, against the fleet median",
                          "grouped_bars", {"categories": labels, "groups": [BarGroup("slowest / median", slowest)],
                                           "ylabel": "ratio to the median", "ref": 1 - F.PRACTICAL},
                          "the slowest unit's ratio to the median per case; the line marks 3% below"))
    # A gap is a case most hosts ran and some did not; a case only a few hosts ran is another experiment
    # (the shipped bundles: 30 lent machines, each a session of its own, each case run on one or two).
    n = len(fleet.hosts)
    gaps = [c for c in fleet.cases if c.missing_hosts and 2 * len(c.missing_hosts) < n]
    for c in gaps[:GAPS_SHOWN]:
        s.paragraphs.append(f"Incomplete: {case_label(c)} has no result from {', '.join(c.missing_hosts)}.")
    if len(gaps) > GAPS_SHOWN:
        s.paragraphs.append(f"... and {len(gaps) - GAPS_SHOWN} more incomplete case(s): `gpuarena fleet --db DB` "
                            "lists them all.")
    few = sum(1 for c in fleet.cases if c.missing_hosts and 2 * len(c.missing_hosts) >= n)
    if few:
        s.paragraphs.append(f"{few} case(s) ran on fewer than half of the {n} hosts: compared where they ran, "
                            "not counted as gaps.")
    return s



def section(pool, rows: list[Result]) -> Section | None:
    """The section, or None when no result has an expected figure and there is no fleet to compare."""
    annotated = E.annotate(rows, pool.results(status="ok"), pool.environment)
    table = expected_table(annotated)
    fleet = fleet_subsection(rows, pool.environment)
    if table is None and fleet is None:
        return None
    s = Section("normal", "Is it normal? Expected figures and the fleet")
    if table is not None:
        n = len(table.rows)
        if n > MAX_ROWS:     # the flagged rows first, then the rest in order, up to the cap
            flagged = [i for i, row in enumerate(table.rows) if str(row[7]).startswith("below-expected")]
            keep = sorted(set(flagged[:MAX_ROWS]) | set(range(n)[:max(0, MAX_ROWS - len(flagged))]))
            table = Table(table.id, table.columns, [table.rows[i] for i in keep], table.title, table.note,
                          details=table.details)
            s.paragraphs.append(f"The table shows {len(keep):,} of {n:,} results, every one below expected first "
                                f"({n - len(keep):,} left out here); `gpuarena results --format json` gives every "
                                "result's expected figure.")
        s.tables.append(table)
    if fleet is not None:
        s.subsections.append(fleet)
    return s
