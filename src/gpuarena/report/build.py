"""The report as data: sections of tables and chart specifications, from the stored rows read once.

HTML and Markdown are two renderings of the same `Report`, so the Markdown
carries exactly the tables the HTML shows.  Cells are plain strings here;
escaping is the renderer's job.  Analysis (compare, cost, claims, advice) is
called from gpuarena.analysis, never re-computed here.
"""

from __future__ import annotations

import re

from gpuarena.analysis.physics import models
from gpuarena.analysis.rows.derived import with_derived
from gpuarena.errors import UserError
from gpuarena.report import analysis_sections as an
from gpuarena.report import fleet_section, multigpu
from gpuarena.report import endpoint_section, llm_section as _llm, serving
from gpuarena.report.comparison import comparison
from gpuarena.report.first_screen import answer
from gpuarena.report.footnotes import footnote
from gpuarena.report.model import Report, Section, ok
from gpuarena.report.notes import NAN, NOISY_TINY, results_notes
from gpuarena.report.run_sections import telemetry_section, warnings_section, what_was_run
from gpuarena.report.workload_sections import workload_section
from gpuarena.store.pool import Pool
from gpuarena.store.result import Result
from gpuarena.workloads import registry

# --- the report -----------------------------------------------------------------

def gather(store, run_ids: list[str] | None = None, baseline: str | None = None,
           case_id: int | None = None) -> Report:
    """Everything the report shows, from the stored results of the given runs (default: all).

    The results table is read once (`Pool.read`: the typed rows and their environments); every
    section gets rows and that pool, never the store, and the analyses it calls ask the pool."""
    pool = Pool.read(store)
    everything = pool.rows
    wanted = set(run_ids or [])
    rows = [r for r in everything if r.source != "published" and (not wanted or r.run_id in wanted)]
    rows = with_derived(rows, [r for r in everything if r.status == "ok"])
    if not rows:
        where = f"run(s) {', '.join(run_ids)}" if run_ids else store.path
        raise UserError(f"no results in {where}: nothing to report")
    runs = [store.run(rid) for rid in (run_ids or sorted({r.run_id for r in rows if r.run_id}))]
    if case_id is not None and not any(r.id == case_id for r in rows):
        raise UserError(f"--case {case_id}: no result with that id in the reported runs")
    compared = comparison(pool, rows, baseline)
    also = [compared.data["baseline"], *compared.data["gpus"]] if compared else []
    sections = [answer(pool, rows, first_jobs(rows), compared), what_was_run(pool, runs, rows),
                an.hardware(rows, also), compared, an.claims(pool), an.cost(pool, rows, baseline),
                an.advice(pool, rows)]
    sections += [workload_section(w, [r for r in rows if r.workload == w]) for w in workloads_in(rows)
                 if not _multi_gpu(w)]
    sections += [_llm.llm_section(rows), serving.section(rows, pool), endpoint_section.section(rows),
                 multi_gpu_section(pool, rows), fleet_section.section(pool, rows),
                 telemetry_section(rows, case_id), warnings_section(rows)]
    sections = [s for s in sections if s is not None]
    explain_flags(sections[1:], rows)
    names = sorted({str(r.device_name or r.device or "?") for r in rows})
    title = f"gpuarena report: {', '.join(names)}"
    subtitle = f"{len(rows)} results from {suites_text(runs)}"
    if compared:
        subtitle += f"; compared with {compared.data['baseline']}"
    return footnote(Report(title=title, subtitle=subtitle, headline=[], sections=sections))


def first_jobs(rows: list[Result]) -> list[str]:
    """The workloads the first screen answers for: every job one buys a GPU for, multi-GPU training
    included (its figure per GPU); not the micro-benchmarks and collectives that bound them."""
    out = []
    for w in workloads_in([r for r in rows if ok(r)]):
        cls = registry.find(w)
        if cls is None or cls.kind not in ("micro", "collective"):
            out.append(w)
    return out


def suites_text(runs: list[dict]) -> str:
    """The suites the runs came from; imported bundles counted, not listed one by one."""
    suites = [r["suite"] for r in runs]
    imported = [x for x in suites if str(x).startswith("import:")]
    named = list(dict.fromkeys(x for x in suites if not str(x).startswith("import:")))
    parts = named + ([f"{len(imported)} imported bundle{'s' if len(imported) > 1 else ''}"] if imported else [])
    return ", ".join(parts) or "stored results"


def _multi_gpu(workload: str) -> bool:
    cls = registry.find(workload)
    return cls is not None and cls.multi_gpu


def explain_flags(sections: list[Section], rows: list[Result]) -> None:
    """Say what a flag means where it first appears: the first section with a table cell naming it."""
    for note in results_notes(rows):
        word = "NaN" if note == NAN else "noisy"
        flat = [s for sec in sections for s in (sec, *sec.subsections)]
        named = re.compile(rf"\b{word}\b")
        first = next((sec for sec in flat if any(named.search(cell) for t in sec.tables for row in t.rows
                                                 for cell in row)), None)
        if first is not None:
            first.paragraphs.append(note if note != NOISY_TINY else "Noisy" + note.removeprefix("noisy"))
        else:
            sections[0].paragraphs.append(note)


def workloads_in(rows: list[Result]) -> list[str]:
    out: list[str] = []
    for r in rows:
        if r.workload not in out:
            out.append(r.workload)
    return out


def multi_gpu_section(pool: Pool, rows: list[Result]) -> Section | None:
    """Scaling efficiency of data-parallel training against N, and collective bus bandwidth against
    message size.  Both read the fields the multi-GPU workloads store, defensively."""
    ddp = [r for r in rows if models.DATA_PARALLEL.judges(r.workload) and ok(r)]
    coll = [r for r in rows if _multi_gpu(r.workload) and registry.find(r.workload).kind == "collective" and ok(r)]
    if not ddp and not coll:
        return None
    s = Section("multi-gpu", "Multi-GPU")
    if ddp:
        s.subsections.append(scaling_subsection(pool, ddp))
    if coll:
        s.subsections.append(busbw_subsection(coll))
    return s


def scaling_subsection(pool: Pool, rows: list[Result]) -> Section:
    return multigpu.scaling(rows, pool)


def busbw_subsection(rows: list[Result]) -> Section:
    return multigpu.busbw(rows)
