"""The report as data: sections of tables and chart specifications, read from the store.

HTML and Markdown are two renderings of the same `Report`, so the Markdown
carries exactly the tables the HTML shows.  Cells are plain strings here;
escaping is the renderer's job.  Analysis (compare, cost, claims, advice) is
called from gpuarena.analysis, never re-computed here.
"""

from __future__ import annotations

import re

from gpuarena.analysis.derived import with_derived
from gpuarena.analysis.rows import finite_first
from gpuarena.errors import UserError
from gpuarena.report import analysis_sections as an
from gpuarena.report import headline as H
from gpuarena.report import fleet_section, multigpu
from gpuarena.report import llm_section as _llm, serving
from gpuarena.report.model import (Report, Section, Table, brief_params, device_of, fmt_num,  # noqa: F401
                                   ok, params_text, varying_params)
from gpuarena.report.notes import NAN, NOISY_TINY, results_notes
from gpuarena.report.run_sections import telemetry_section, warnings_section, what_was_run
from gpuarena.report.workload_sections import workload_section
from gpuarena.workloads import registry
from gpuarena.workloads.base import param_acts

# --- the report -----------------------------------------------------------------

def gather(store, run_ids: list[str] | None = None, baseline: str | None = None,
           case_id: int | None = None) -> Report:
    """Everything the report shows, from the stored results of the given runs (default: all)."""
    rows = [r for r in store.results(run_ids or None) if r.get("source") != "published"]
    rows = with_derived(rows, store.results(status="ok"))
    if not rows:
        where = f"run(s) {', '.join(run_ids)}" if run_ids else store.path
        raise UserError(f"no results in {where}: nothing to report")
    runs = [store.run(rid) for rid in (run_ids or sorted({r["run_id"] for r in rows if r.get("run_id")}))]
    if case_id is not None and not any(r["id"] == case_id for r in rows):
        raise UserError(f"--case {case_id}: no result with that id in the reported runs")
    sections = [what_was_run(store, runs, rows), an.hardware(rows), an.comparison(store, rows, baseline),
                an.claims(store), an.cost(store, rows, baseline), an.advice(store, rows)]
    sections += [workload_section(w, [r for r in rows if r["workload"] == w]) for w in workloads_in(rows)
                 if not _multi_gpu(w)]
    sections += [_llm.llm_section(rows), serving.section(rows, store), multi_gpu_section(store, rows),
                 fleet_section.section(store, rows),
                 telemetry_section(rows, case_id), warnings_section(rows)]
    sections = [s for s in sections if s is not None]
    explain_flags(sections, rows)
    names = sorted({str(r.get("device_name") or r.get("device") or "?") for r in rows})
    title = f"gpuarena report: {', '.join(names)}"
    subtitle = f"{len(rows)} results from {', '.join(r['suite'] for r in runs) or 'stored results'}"
    tiles = headline(rows)
    compared = next((s for s in sections if s.id == "comparison"), None)
    if compared:
        subtitle += f"; compared with {compared.title.removeprefix('Comparison with ')}"
        for gpu, n, geo, *_ in compared.tables[0].rows:
            tiles.insert(1, (f"{gpu} vs {compared.title.removeprefix('Comparison with ')}", geo,
                             f"geometric mean of {n} ratios (see Comparison)"))
    return Report(title=title, subtitle=subtitle, headline=tiles, sections=sections)


def _multi_gpu(workload: str) -> bool:
    cls = registry.find(workload)
    return cls is not None and cls.multi_gpu


def explain_flags(sections: list[Section], rows: list[dict]) -> None:
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


def workloads_in(rows: list[dict]) -> list[str]:
    out: list[str] = []
    for r in rows:
        if r["workload"] not in out:
            out.append(r["workload"])
    return out


def headline(rows: list[dict]) -> list[tuple[str, str, str]]:
    good = [r for r in rows if ok(r)]
    tiles = [("results", f"{len(good)} ok", f"of {len(rows)} stored" + (
        f"; {len(rows) - len(good)} failed, OOM or timed out" if len(good) < len(rows) else ""))]
    for w in workloads_in(good):
        mine = [r for r in good if r["workload"] == w]
        if H.is_latency(w):
            timed = [r for r in finite_first(mine) if H.value(r) is not None]
            if timed:
                best = min(timed, key=H.value)
                tiles.append((w, H.text(best), f"best: {device_of(best)}, {best['variant']}"
                              + (f", {params_text(best, ['batch_size'])}" if "batch_size" in (best.get("params") or {})
                                 else "")))
            continue
        if len({r.get("flops_per_item") for r in mine}) > 1 and all(r.get("tflops") for r in mine):
            # items of different sizes (matmul shapes): the FLOP rate is the comparable figure
            best = max(mine, key=lambda r: r["tflops"])
            # what sets the best apart: its variant where variants differ, its varying parameters
            what = [best["variant"]] if len({r["variant"] for r in mine}) > 1 else []
            acting = [k for k in varying_params(mine) if param_acts(k, best["variant"])]
            what.append(params_text(best, acting) or best.get("precision") or "")
            tiles.append((w, f"{fmt_num(best['tflops'])} TFLOP/s",
                          f"best: {device_of(best)}, " + ", ".join(x for x in what if x)))
            continue
        best = max(finite_first(mine), key=lambda r: r["throughput_median"])
        tiles.append((w, f"{fmt_num(best['throughput_median'])} {best.get('unit') or ''}".strip(),
                      f"best: {device_of(best)}, {best['variant']}"
                      + (f", {params_text(best, ['batch_size'])}" if "batch_size" in (best.get("params") or {}) else "")
                      + (" (its output turned NaN)" if (best.get("extra") or {}).get("nan") else "")))
    warned = sum(1 for r in rows if r.get("warnings"))
    tiles.append(("warnings", str(warned), "results carry a warning" if warned != 1 else "result carries a warning"))
    return tiles


def multi_gpu_section(store, rows: list[dict]) -> Section | None:
    """Scaling efficiency of data-parallel training against N, and collective bus bandwidth against
    message size.  Both read the fields the multi-GPU workloads store, defensively."""
    ddp = [r for r in rows if r["workload"] == "ddp-train" and ok(r)]
    coll = [r for r in rows if _multi_gpu(r["workload"]) and registry.find(r["workload"]).kind == "collective" and ok(r)]
    if not ddp and not coll:
        return None
    s = Section("multi-gpu", "Multi-GPU")
    if ddp:
        s.subsections.append(scaling_subsection(store, ddp))
    if coll:
        s.subsections.append(busbw_subsection(coll))
    return s


def scaling_subsection(store, rows: list[dict]) -> Section:
    return multigpu.scaling(rows, store)


def busbw_subsection(rows: list[dict]) -> Section:
    return multigpu.busbw(rows)
