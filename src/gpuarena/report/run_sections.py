"""The sections about the runs themselves: what was run and where (runs, method, environments),
the telemetry of one case, and the warnings and failures."""

from __future__ import annotations

from gpuarena.errors import UserError
from gpuarena.measure.telemetry import THROTTLE_BITS
from gpuarena.report import cautions
from gpuarena.report.model import NUMERIC, PROSE, TEXT, Chart, Section, Table, device_of, params_text
from gpuarena.numbers import fmt_num
from gpuarena.store.environment import Fingerprint
from gpuarena.store.result import Result


def _order(key: tuple) -> list:
    """Sort key of a tuple of numbers, text and None: numbers as numbers (5 before 10)."""
    return [(v is None, v if isinstance(v, (int, float)) else 0, str(v)) for v in key]


def what_was_run(pool, runs: list[dict], rows: list[Result]) -> Section:
    s = Section("run", "What was run, and where")
    run_rows = []
    for run in runs:
        n = sum(1 for r in rows if r.run_id == run["id"])
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
            mine = [r for r in rows if r.run_id == run["id"] and r.throughput is not None]
            groups: dict[tuple, list[str]] = {}
            for r in mine:
                key = (r.throughput.n, len(r.extra.processes or [None]), r.size, str(r.device).startswith("cuda"))
                groups.setdefault(key, []).append(r.workload)
            for (n, procs, size, cuda), wls in sorted(groups.items(), key=lambda kv: _order(kv[0])):
                method_rows.append([run["id"], ", ".join(dict.fromkeys(wls)), str(n or "-"), "-", "-", str(procs),
                                    size, ("CUDA events" if cuda else "host clock")
                                    + " (imported: plan not in the bundle)"])
    s.tables.append(Table("method", [("runs", TEXT), ("workloads", PROSE), ("repeats", NUMERIC),
                                     ("warm-up steps", NUMERIC), ("steps per repeat", NUMERIC),
                                     ("processes", NUMERIC), ("size", TEXT), ("timing", PROSE)],
                          collapse(method_rows, len(runs)), "Method",
                          "Each case runs in its own process; the first step (compilation, autotuning) is timed "
                          "apart and excluded; throughput is items per step over each repeat's mean step time, "
                          "with the median and a Student-t 95% interval computed on the log scale (so it never "
                          "goes below zero) over repeats (over process means for a case measured in several "
                          "processes: --processes).", details=("timing",)))
    env_rows = []
    for env_id in sorted({r.env_id for r in rows if r.env_id is not None}):
        fp = fingerprint(pool, env_id)
        libs = fp.libraries or {}        # library name -> version, as the machine reported them
        gpus = [g.name for g in fp.gpus or [] if g.name]
        gpu_text = ", ".join(f"{n} x{gpus.count(n)}" for n in dict.fromkeys(gpus)) or "none"
        env_rows.append([str(env_id), fp.hostname or "?", fp.cpu or "?", gpu_text,
                         fp.driver or "-", fp.torch_cuda or "-", str(fp.cudnn or "-"),
                         libs.get("torch") or "-", fp.python or "-", fp.os or "-"])
    # machines that differ only in their database id are one row, naming the ids
    same: dict[tuple, list[str]] = {}
    for row in env_rows:
        same.setdefault(tuple(row[1:]), []).append(row[0])
    env_rows = [[id_ranges([int(i) for i in ids]), *key] for key, ids in same.items()]
    s.tables.append(Table("environments", [("env", NUMERIC), ("host", TEXT), ("CPU", TEXT), ("GPUs", TEXT),
                                           ("driver", TEXT), ("CUDA", TEXT), ("cuDNN", TEXT), ("torch", TEXT),
                                           ("Python", TEXT), ("OS", TEXT)], env_rows, "Environments"))
    return s


def fingerprint(pool, env_id: int) -> Fingerprint:
    """A stored environment, typed; one that is missing or fails the type (edited by hand) reads as unknown."""
    try:
        return Fingerprint.model_validate(pool.environment(env_id) or {})
    except ValueError:
        return Fingerprint()


def collapse(method_rows: list[list[str]], n_runs: int) -> list[list[str]]:
    """One row per distinct method, whichever runs used it: six imported bundles measured with
    the same repeats are one line naming the six runs, not six lines."""
    groups: dict[tuple, list[list[str]]] = {}
    for row in method_rows:
        groups.setdefault(tuple(row[2:]), []).append(row)
    out = []
    for key, rs in groups.items():
        runs = list(dict.fromkeys(r[0] for r in rs))
        label = (f"all {n_runs} runs" if len(runs) == n_runs and n_runs > 1 else
                 runs[0] if len(runs) == 1 else f"{len(runs)} runs")
        wls = list(dict.fromkeys(w for r in rs for w in r[1].split(", ")))
        out.append([label, ", ".join(wls), *key])
    return out


def warnings_section(rows: list[Result]) -> Section | None:
    # One row per kind of warning (report.cautions), with what it changes about the figure and the
    # results that carry it: 40 results with the same NaN note are one fact, not 40 rows.
    warn_rows = [[kind, str(len(rs)), means, ", ".join(dict.fromkeys(r.workload for r in rs)),
                  id_ranges([r.id for r in rs])] for (kind, means), rs in cautions.grouped(rows).items()]
    bad_rows = [[str(r.id), r.workload, r.variant, device_of(r), params_text(r, list(r.params)[:2]),
                 r.status, (r.error or "")[:200]] for r in rows if r.status != "ok"]
    if not warn_rows and not bad_rows:
        return None
    s = Section("warnings", "Warnings and failures",
                ["Results check themselves: high spread, too few repeats, throttling and NaN losses are stored "
                 "with the result. A failed, OOM or timed-out case costs that case only."])
    if warn_rows:
        s.tables.append(Table("warnings-table", [("kind", TEXT), ("results", NUMERIC), ("what it changes", PROSE),
                                                 ("workloads", PROSE), ("result ids", TEXT)], warn_rows,
                              "Warnings, by kind", details=("result ids",)))
    if bad_rows:
        s.tables.append(Table("failures", [("result", NUMERIC), ("workload", TEXT), ("variant", TEXT),
                                           ("device", TEXT), ("params", TEXT), ("status", TEXT), ("error", PROSE)],
                              bad_rows, "Cases that did not finish", details=("error",)))
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

def telemetry_section(rows: list[Result], case_id: int | None) -> Section:
    s = Section("telemetry", "Telemetry")
    with_tel = [r for r in rows if r.telemetry]
    if case_id is not None:
        chosen = next(r for r in rows if r.id == case_id)
        if not chosen.telemetry:
            raise UserError(f"--case {case_id}: that result has no telemetry (NVML was not available)")
    elif with_tel:
        ok_tel = [r for r in with_tel if r.status == "ok"] or with_tel
        chosen = max(ok_tel, key=lambda r: (r.telemetry[-1].t or 0, r.id))
    else:
        s.paragraphs.append("No result carries telemetry: NVML was not available where these cases ran "
                            "(a CPU run has no power, temperature or clock readings, and none are invented).")
        return s
    samples = chosen.telemetry
    seen = 0
    for x in samples:
        seen |= x.reasons or 0
    reasons = [name for bit, name in THROTTLE_BITS.items() if seen & bit]
    s.paragraphs.append(
        f"Result {chosen.id}: {chosen.workload} [{chosen.variant}] "
        f"{params_text(chosen, list(chosen.params)[:2])} on {device_of(chosen)}; "
        f"{len(samples)} NVML samples over the timed window"
        + (f"; throttling seen: {', '.join(reasons)} (shaded)." if reasons else "; no throttling reported.")
        + " Choose another case with --case ID.")
    col = lambda k: [getattr(x, k) for x in samples if getattr(x, k) is not None]  # noqa: E731
    trow = []
    for key, label in (("power_w", "power W"), ("temp_c", "temperature °C"), ("sm_clock_mhz", "SM clock MHz"),
                       ("util_pct", "utilisation %")):
        v = col(key)
        if v:
            trow.append([label, fmt_num(min(v)), fmt_num(sum(v) / len(v)), fmt_num(max(v))])
    s.tables.append(Table("telemetry-table", [("reading", TEXT), ("min", NUMERIC), ("mean", NUMERIC),
                                              ("max", NUMERIC)], trow, f"Telemetry of result {chosen.id}"))
    s.charts.append(Chart("telemetry-chart", f"Power, temperature and SM clock: result {chosen.id}",
                          "telemetry", {"samples": samples},
                          f"power, temperature and SM clock over time for result {chosen.id}"))
    return s
