"""The report as data: sections of tables and chart specifications, read from the store.

HTML and Markdown are two renderings of the same `Report`, so the Markdown
carries exactly the tables the HTML shows.  Cells are plain strings here;
escaping is the renderer's job.  Analysis (compare, cost, claims, advice) is
called from gpuarena.analysis, never re-computed here.
"""

from __future__ import annotations

import math
import re

from gpuarena.analysis.derived import with_derived
from gpuarena.analysis.rows import finite_first, per_repeat_throughput, ratio_text
from gpuarena.analysis.rows import flags as row_flags
from gpuarena.errors import UserError
from gpuarena.identity import comparable
from gpuarena.measure import stats
from gpuarena.measure.telemetry import THROTTLE_BITS
from gpuarena.report import analysis_sections as an
from gpuarena.report import headline as H
from gpuarena.report import multigpu
from gpuarena.report import llm_section as _llm, serving
from gpuarena.report.model import (NUMERIC, PROSE, TEXT, Chart, Report, Section, Table, brief_params,  # noqa: F401
                                   catalog_share, device_of, ok,
                                   fmt_bytes, fmt_num, pct, prune, slug)
from gpuarena.workloads import registry
from gpuarena.workloads.base import SCOPED_PARAMS, param_acts

# --- small helpers ------------------------------------------------------------

def varying_params(rows: list[dict]) -> list[str]:
    keys: list[str] = []
    for r in rows:
        for k in r.get("params") or {}:
            if k not in keys:
                keys.append(k)
    return [k for k in keys if len({repr((r.get("params") or {}).get(k)) for r in rows}) > 1]


def params_text(r: dict, keys: list[str]) -> str:
    """Only the keys the result has: a parameter added to a workload later is not "None" on older results."""
    p = r.get("params") or {}
    return " ".join(f"{k}={p[k]}" for k in keys if k in p)


def x_key(workload: str, rows: list[dict], keys: list[str]) -> str | None:
    """The workload's declared axis, when it varies among the rows and is a number in each."""
    cls = registry.find(workload)
    k = cls.axis if cls is not None else None
    if k in keys and all(isinstance((r.get("params") or {}).get(k), (int, float))
                         and not isinstance((r.get("params") or {}).get(k), bool) for r in rows):
        return k
    return None


def flags(r: dict) -> list[str]:
    out = row_flags(r, brief=True)
    if r.get("source") and r["source"] != "measured":
        out.append(r["source"])
    return out


def ci_text(thr: dict) -> str:
    lo, hi = thr.get("ci95_low"), thr.get("ci95_high")
    if lo is None or hi is None or (thr.get("n") or 0) < 2:
        return "-"
    return f"{fmt_num(lo)} – {fmt_num(hi)}"


def search_text(r: dict) -> str:
    """A search result's answer: the batch it found, and the throughput it timed there."""
    found = H.max_batch_text(r)
    if found == "-":
        return found
    steps = (r.get("params") or {}).get("inference_steps")
    return (f"{found}: {fmt_num(r.get('throughput_median'))} {r.get('unit') or ''} there"
            + (f" at {steps} steps" if steps else ""))


def memory_bytes(r: dict) -> tuple[int | None, str]:
    if r.get("peak_memory_bytes"):
        return r["peak_memory_bytes"], "device"
    rss = (r.get("extra") or {}).get("peak_rss_bytes")
    return (rss, "process RSS") if rss else (None, "")


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
    from gpuarena.report.notes import NAN, NOISY_TINY, results_notes

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


def _order(key: tuple) -> list:
    """Sort key of a tuple of numbers, text and None: numbers as numbers (5 before 10)."""
    return [(v is None, v if isinstance(v, (int, float)) else 0, str(v)) for v in key]


def what_was_run(store, runs: list[dict], rows: list[dict]) -> Section:
    s = Section("run", "What was run, and where")
    run_rows = []
    for run in runs:
        n = sum(1 for r in rows if r.get("run_id") == run["id"])
        run_rows.append([run["id"], run["suite"], run["device"], run["created_at"], run["status"], str(n)])
    s.tables.append(Table("runs", [("run", TEXT), ("suite", TEXT), ("device", TEXT), ("started (UTC)", TEXT),
                                   ("status", TEXT), ("results", NUMERIC)], run_rows, "Runs"))
    method_rows = []
    for run in runs:
        # one row per distinct method within a run, naming the workloads it was used for
        combos: dict[tuple, list[str]] = {}
        for c in run.get("plan") or []:
            key = (c.get("repeats"), c.get("warmup"), c.get("steps"), c.get("processes", 1), c.get("size", "full"))
            combos.setdefault(key, []).append(c.get("workload", "?"))
        timing = ("CUDA events around each window of steps" if str(run["device"]).startswith("cuda")
                  else "host clock (perf_counter) with a synchronisation at both ends")
        for (rep, warm, steps, procs, size), wls in sorted(combos.items(), key=lambda kv: _order(kv[0])):
            method_rows.append([run["id"], ", ".join(dict.fromkeys(wls)), str(rep), str(warm), str(steps), str(procs),
                                size, timing])
        if not combos:   # an imported bundle carries results, not the plan: the repeats are in them
            mine = [r for r in rows if r.get("run_id") == run["id"] and r.get("throughput")]
            groups: dict[tuple, list[str]] = {}
            for r in mine:
                key = (r["throughput"].get("n"), len((r.get("extra") or {}).get("processes") or [None]),
                       str(r.get("size") or "full"), str(r.get("device")).startswith("cuda"))
                groups.setdefault(key, []).append(r["workload"])
            for (n, procs, size, cuda), wls in sorted(groups.items(), key=lambda kv: _order(kv[0])):
                method_rows.append([run["id"], ", ".join(dict.fromkeys(wls)), str(n or "-"), "-", "-", str(procs),
                                    size, ("CUDA events" if cuda else "host clock")
                                    + " (imported: plan not in the bundle)"])
    s.tables.append(Table("method", [("run", TEXT), ("workloads", PROSE), ("repeats", NUMERIC),
                                     ("warm-up steps", NUMERIC), ("steps per repeat", NUMERIC),
                                     ("processes", NUMERIC), ("size", TEXT), ("timing", PROSE)],
                          method_rows, "Method",
                          "Each case runs in its own process; the first step (compilation, autotuning) is timed "
                          "apart and excluded; throughput is items per step over each repeat's mean step time, "
                          "with the median and a Student-t 95% interval computed on the log scale (so it never "
                          "goes below zero) over repeats (over process means for a case measured in several "
                          "processes: --processes)."))
    env_rows = []
    for env_id in sorted({r["env_id"] for r in rows if r.get("env_id") is not None}):
        fp = store.environment(env_id) or {}
        libs = fp.get("libraries") or {}
        gpus = [g.get("name") for g in fp.get("gpus") or [] if g.get("name")]
        gpu_text = ", ".join(f"{n} x{gpus.count(n)}" for n in dict.fromkeys(gpus)) or "none"
        env_rows.append([str(env_id), str(fp.get("hostname", "?")), str(fp.get("cpu", "?")), gpu_text,
                         str(fp.get("driver") or "-"), str(fp.get("torch_cuda") or "-"), str(fp.get("cudnn") or "-"),
                         str(libs.get("torch") or "-"), str(fp.get("python") or "-"), str(fp.get("os") or "-")])
    s.tables.append(Table("environments", [("env", NUMERIC), ("host", TEXT), ("CPU", TEXT), ("GPUs", TEXT),
                                           ("driver", TEXT), ("CUDA", TEXT), ("cuDNN", TEXT), ("torch", TEXT),
                                           ("Python", TEXT), ("OS", TEXT)], env_rows, "Environments"))
    return s


def warnings_section(rows: list[dict]) -> Section | None:
    # One row per warning, naming the results that carry it: 40 results with the same NaN note
    # are one fact, not 40 rows.
    by_text: dict[str, list[dict]] = {}
    for r in rows:
        for w in r.get("warnings") or []:
            # the CV itself is in the throughput tables; here "spread above 5%" is the fact
            by_text.setdefault(re.sub(r"CV [\d.]+% > (\S+)", r"CV > \1", w), []).append(r)
    warn_rows = [[w, str(len(rs)), ", ".join(dict.fromkeys(r["workload"] for r in rs)), id_ranges([r["id"] for r in rs])]
                 for w, rs in by_text.items()]
    bad_rows = [[str(r["id"]), r["workload"], r["variant"], device_of(r), params_text(r, list(r.get("params") or {})[:2]),
                 r["status"], str(r.get("error") or "")[:200]] for r in rows if r.get("status") != "ok"]
    if not warn_rows and not bad_rows:
        return None
    s = Section("warnings", "Warnings and failures",
                ["Results check themselves: high spread, too few repeats, throttling and NaN losses are stored "
                 "with the result. A failed, OOM or timed-out case costs that case only."])
    if warn_rows:
        s.tables.append(Table("warnings-table", [("warning", PROSE), ("results", NUMERIC), ("workloads", TEXT),
                                                 ("result ids", TEXT)], warn_rows, "Warnings"))
    if bad_rows:
        s.tables.append(Table("failures", [("result", NUMERIC), ("workload", TEXT), ("variant", TEXT),
                                           ("device", TEXT), ("params", TEXT), ("status", TEXT), ("error", PROSE)],
                              bad_rows, "Cases that did not finish"))
    return s


def id_ranges(ids: list[int]) -> str:
    """[1, 2, 3, 7] -> "1-3, 7"."""
    out: list[list[int]] = []
    for i in sorted(set(ids)):
        if out and i == out[-1][1] + 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in out)


def workload_section(workload: str, rows: list[dict]) -> Section:
    s = Section(f"wl-{slug(workload)}", workload)
    keys = varying_params(rows)
    unit = H.unit(workload, next((r.get("unit") for r in rows if r.get("unit")), "items/s"))
    latency = H.is_latency(workload)
    table_rows = []
    devices = list(dict.fromkeys(device_of(r) for r in rows))
    sources = {r.get("source") for r in rows}
    for r in rows:
        thr = r.get("throughput") or {}
        extra = r.get("extra") or {}
        mem, _ = memory_bytes(r)
        shown_flags = [f for f in flags(r) if len(sources) > 1 or f != r.get("source")]
        table_rows.append([
            str(r["id"]), device_of(r), r["variant"], params_text(r, keys) or "-", r.get("precision") or "-",
            fmt_num(H.value(r)) if ok(r) else r["status"], ci_text(dict(zip(("ci95_low", "ci95_high"), H.interval(r)),
                                                                        n=thr.get("n"))),
            search_text(r), pct(thr.get("cv")),
            fmt_num(r.get("tflops")), pct(catalog_share(r)), pct(extra.get("share_of_ceiling")),
            fmt_bytes(mem) + (" RSS" if mem and memory_bytes(r)[1] != "device" else ""),
            fmt_num(r.get("power_w_mean")), fmt_num(r.get("energy_j_per_item")), ", ".join(shown_flags),
        ])
    common = []
    if len(devices) == 1:
        common.append(f"All on {devices[0]}" + (f" ({next(iter(sources))} results)" if len(sources) == 1
                                                 and None not in sources and "measured" not in sources else "") + ".")
    fixed = [k for k in (rows[0].get("params") or {}) if k not in keys]
    if fixed:
        common.append("Parameters common to every case: " + params_text(rows[0], fixed) + ".")
    if common:
        s.paragraphs.append(" ".join(common))
    table = prune(Table(f"{s.id}-throughput", [
        ("result", NUMERIC), ("device", TEXT), ("variant", TEXT), ("params", PROSE), ("precision", TEXT),
        (f"median {unit}", NUMERIC), ("95% CI", NUMERIC), ("largest batch that fits", PROSE), ("CV", NUMERIC),
        ("TFLOP/s", NUMERIC), ("of peak", NUMERIC), ("of matmul ceiling", NUMERIC), ("peak memory", NUMERIC),
        ("power W", NUMERIC), (f"J/{H.item(workload)}", NUMERIC), ("flags", PROSE)], table_rows,
        "Latency" if latency else "Throughput",
        "TFLOP/s from the workload's FLOP count per item; 'of peak' is the share of the catalog's dense peak "
        "for the precision used (PyTorch's default counts as FP32, though cuDNN runs convolutions in TF32); "
        "'of matmul ceiling' is the share of the best matmul rate measured on the same GPU. Empty columns "
        "are left out; RSS marks a CPU process's peak resident memory."))
    if len(devices) == 1:
        table = drop_column(table, "device")
    if latency:   # a narrower table: the matmul ceiling says little about a pipeline of many kernels
        # the spread is in the interval (and the noisy flag)
        table = drop_column(drop_column(drop_column(table, "of matmul ceiling"), "of peak"), "CV")
        precisions = {r.get("precision") for r in rows}
        if len(precisions) == 1 and None not in precisions:
            table = drop_column(table, "precision")
            s.paragraphs.append(f"Precision: {next(iter(precisions))}.")
        table.note = (f"Seconds per {H.item(workload)}, as the articles quote it: a call's time over its batch; "
                      "the interval is the reciprocal of the throughput interval. A maximum-concurrency search "
                      "(search=max-batch) answers another question, at fewer denoising steps: it shows the "
                      "largest batch that fitted and its throughput there, never a latency. TFLOP/s from the "
                      "workload's FLOP count per image. Empty columns are left out.")
    if "TFLOP/s" not in [h for h, _ in table.columns]:
        table.note = "Empty columns are left out (a copy or bandwidth test has no FLOP rate)."
    s.tables.append(table)
    good = [r for r in rows if ok(r)]
    xk = x_key(workload, good, keys)
    if xk:
        s.charts.append(Chart(f"{s.id}-scaling", f"Throughput vs {xk}", "lines_with_ci", {
            "series": series_by(good, xk, keys, lambda r: r["throughput_median"],
                                lambda r: (r.get("throughput") or {}).get("ci95_low"),
                                lambda r: (r.get("throughput") or {}).get("ci95_high")),
            "xlabel": xk, "ylabel": unit, "logx": len({r["params"][xk] for r in good}) > 3},
            f"{workload}: {unit} against {xk}, one line per device and variant, 95% CI error bars"))
        if len(devices) == 1:
            s.charts[-1].title += f" ({devices[0]})"
    if not xk and len(good) > 1 and all(r.get("tflops") for r in good):
        # Cases that differ in shape or dtype, not size: their FLOP rate is what compares.
        cats = [" ".join(p for p in (r["variant"] if len({x["variant"] for x in good}) > 1 else "",
                                      params_text(r, keys)) if p) or str(r["id"]) for r in good]
        s.charts.append(Chart(f"{s.id}-tflops", "Achieved TFLOP/s per case", "grouped_bars", {
            "categories": cats, "ylabel": "TFLOP/s",
            "groups": [{"label": d, "values": [r["tflops"] if device_of(r) == d else None for r in good]}
                       for d in devices]},
            f"{workload}: achieved TFLOP/s of each case"))
    ladder = tuning_ladder(workload, good, keys)
    if ladder:
        s.tables.append(ladder[0])
        s.charts.append(ladder[1])
    mem_rows = [r for r in good if memory_bytes(r)[0]]
    if xk and mem_rows:
        kind = memory_bytes(mem_rows[0])[1]
        s.charts.append(Chart(f"{s.id}-memory", f"Peak memory ({kind}) vs {xk}", "lines_with_ci", {
            "series": series_by(mem_rows, xk, keys, lambda r: memory_bytes(r)[0] / 2**30, lambda r: None,
                                lambda r: None),
            "xlabel": xk, "ylabel": f"GiB ({kind})", "logx": len({r["params"][xk] for r in mem_rows}) > 3},
            f"{workload}: peak memory in GiB against {xk}"))
    return s


def drop_column(t: Table, name: str) -> Table:
    keep = [i for i, (header, _) in enumerate(t.columns) if header != name]
    return Table(t.id, [t.columns[i] for i in keep], [[row[i] for i in keep] for row in t.rows], t.title, t.note)


def series_by(rows, xk, keys, y, lo, hi) -> list[dict]:
    """Lines keyed by device, variant and the other varying parameters; points sorted by x."""
    groups: dict[str, list[dict]] = {}
    one_device = len({device_of(r) for r in rows}) == 1     # then the chart's caption names it
    for r in rows:
        other = [k for k in keys if k != xk]
        label = " · ".join(p for p in ("" if one_device else device_of(r), r["variant"], params_text(r, other)) if p)
        groups.setdefault(label, []).append(r)
    out = []
    for label, rs in groups.items():
        rs = sorted(rs, key=lambda r: r["params"][xk])
        out.append({"label": label, "x": [r["params"][xk] for r in rs], "y": [y(r) for r in rs],
                    "lo": [lo(r) for r in rs], "hi": [hi(r) for r in rs]})
    return out


def tuning_ladder(workload: str, rows: list[dict], keys: list[str]):
    """Speed-up of each variant over `seed` (the article's code) on the same device and parameters,
    within one run (ratios across runs would carry the drift between them), at the run and setting
    where seed and the most variants ran.  A parameter that acts only through one part of a recipe
    (SCOPED_PARAMS: compile_mode) belongs to the recipe, not the setting: such a row is set against
    the same seed and labelled "variant (compile_mode=...)"."""
    by_setting: dict[tuple, list[dict]] = {}
    for r in rows:
        fixed = [k for k in (r.get("params") or {}) if k not in SCOPED_PARAMS]
        by_setting.setdefault((device_of(r), origin_run(r), params_text(r, fixed)), []).append(r)
    chosen: dict[str, tuple] = {}
    for setting, rs in by_setting.items():
        seed = next((r for r in rs if r["variant"] == "seed"), None)
        if seed is None or len(rs) < 2:
            continue
        dev = setting[0]
        best = chosen.get(dev)
        score = (len(rs), sort_value(seed, keys))
        if best is None or score > best[0]:
            chosen[dev] = (score, setting, seed)
    if not chosen:
        return None
    table_rows, per_dev = [], {}
    for dev, (_, setting, seed) in chosen.items():
        per_dev[dev] = {}
        for r in by_setting[setting]:
            v = recipe_label(r, seed)
            if v in per_dev[dev] or not comparable(r, seed):
                continue                    # measured twice in one run: the first stands
            a, b = per_repeat_throughput(r), per_repeat_throughput(seed)
            if len(a) > 1 and len(b) > 1:
                ratio, lo, hi = stats.ratio_ci95(a, b)
            else:
                ratio, lo, hi = r["throughput_median"] / seed["throughput_median"], None, None
            per_dev[dev][v] = (ratio, lo, hi)
            table_rows.append([dev, setting[1], params_text(seed, [k for k in keys if k not in SCOPED_PARAMS]) or "-",
                               v, ratio_text(ratio),
                               f"{lo:.2f} – {hi:.2f}" if lo is not None and math.isfinite(lo) else "-",
                               verdict(ratio, lo, hi)])
    variants = list(dict.fromkeys(v for d in per_dev.values() for v in sorted(d, key=lambda v: (v != "seed", v))))
    groups = [{"label": dev,
               "values": [per_dev[dev].get(v, (None,))[0] for v in variants],
               "lo": [nan_none(per_dev[dev].get(v, (None, None))[1]) for v in variants],
               "hi": [nan_none(per_dev[dev].get(v, (None, None, None))[2]) for v in variants]}
              for dev in per_dev]
    table = Table(f"wl-{slug(workload)}-ladder", [("device", TEXT), ("run", TEXT), ("params", TEXT), ("variant", TEXT),
                                                 ("speed-up over seed", NUMERIC), ("95% CI", NUMERIC),
                                                 ("verdict", TEXT)], table_rows, "Tuning ladder",
                  "seed is the article's code as published; the interval is the ratio of means' 95% interval "
                  "(on the log scale); an interval containing 1.00 is no significant difference.")
    chart = Chart(f"wl-{slug(workload)}-ladder-chart", "Tuning ladder: speed-up over seed", "grouped_bars",
                  {"categories": variants, "groups": groups, "ylabel": "speed-up over seed (x)", "ref": 1.0},
                  f"{workload}: speed-up of each variant over the article's code, per device")
    return table, chart


def recipe_label(r: dict, seed: dict) -> str:
    """The variant, with the recipe-scoped parameters it uses where they differ from seed's."""
    own = [f"{k}={v}" for k, v in (r.get("params") or {}).items()
           if k in SCOPED_PARAMS and param_acts(k, r["variant"]) and v != (seed.get("params") or {}).get(k)]
    return r["variant"] + (f" ({' '.join(own)})" if own else "")


def origin_run(r: dict) -> str:
    """The run that measured a result: an imported result keeps its measuring run in extra."""
    return str((r.get("extra") or {}).get("origin_run_id") or r.get("run_id") or "-")


def nan_none(x):
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def sort_value(r: dict, keys: list[str]):
    p = r.get("params") or {}
    return tuple(p.get(k) if isinstance(p.get(k), (int, float)) else 0 for k in keys)


def verdict(ratio, lo, hi) -> str:
    if lo is None or hi is None or not math.isfinite(lo):
        return "too few samples to tell"
    if lo <= 1.0 <= hi:
        return "no significant difference"
    return f"{ratio_text(ratio)} faster" if ratio > 1 else f"{ratio_text(1 / ratio)} slower"


def telemetry_section(rows: list[dict], case_id: int | None) -> Section:
    s = Section("telemetry", "Telemetry")
    with_tel = [r for r in rows if r.get("telemetry")]
    if case_id is not None:
        chosen = next(r for r in rows if r["id"] == case_id)
        if not chosen.get("telemetry"):
            raise UserError(f"--case {case_id}: that result has no telemetry (NVML was not available)")
    elif with_tel:
        ok_tel = [r for r in with_tel if r.get("status") == "ok"] or with_tel
        chosen = max(ok_tel, key=lambda r: (r["telemetry"][-1].get("t") or 0, r["id"]))
    else:
        s.paragraphs.append("No result carries telemetry: NVML was not available where these cases ran "
                            "(a CPU run has no power, temperature or clock readings, and none are invented).")
        return s
    samples = chosen["telemetry"]
    seen = 0
    for x in samples:
        seen |= int(x.get("reasons") or 0)
    reasons = [name for bit, name in THROTTLE_BITS.items() if seen & bit]
    s.paragraphs.append(
        f"Result {chosen['id']}: {chosen['workload']} [{chosen['variant']}] "
        f"{params_text(chosen, list(chosen.get('params') or {})[:2])} on {device_of(chosen)}; "
        f"{len(samples)} NVML samples over the timed window"
        + (f"; throttling seen: {', '.join(reasons)} (shaded)." if reasons else "; no throttling reported.")
        + " Choose another case with --case ID.")
    col = lambda k: [x[k] for x in samples if x.get(k) is not None]  # noqa: E731
    trow = []
    for key, label in (("power_w", "power W"), ("temp_c", "temperature °C"), ("sm_clock_mhz", "SM clock MHz"),
                       ("util_pct", "utilisation %")):
        v = col(key)
        if v:
            trow.append([label, fmt_num(min(v)), fmt_num(sum(v) / len(v)), fmt_num(max(v))])
    s.tables.append(Table("telemetry-table", [("reading", TEXT), ("min", NUMERIC), ("mean", NUMERIC),
                                              ("max", NUMERIC)], trow, f"Telemetry of result {chosen['id']}"))
    s.charts.append(Chart("telemetry-chart", f"Power, temperature and SM clock: result {chosen['id']}",
                          "telemetry", {"samples": samples},
                          f"power, temperature and SM clock over time for result {chosen['id']}"))
    return s


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
