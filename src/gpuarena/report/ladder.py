"""The tuning ladder: each variant's speed-up over `seed` (the article's code as published), with
the ratio of means' 95% interval, per device, within one run.  workload_sections.py puts the
table and chart in a workload's section."""

from __future__ import annotations

import math

from gpuarena.store.flags import diverged
from gpuarena.analysis.verbs.compare import verdict as compare_verdict
from gpuarena.analysis.rows.common import per_repeat_throughput, ratio_text
from gpuarena.identity import comparable
from gpuarena.measure import stats
from gpuarena.report.chartspec import BarGroup
from gpuarena.report.model import NUMERIC, PROSE, TEXT, Chart, Table, device_of, params_text, pct, slug
from gpuarena.numbers import fmt_num
from gpuarena.workloads.facts import SCOPED_PARAMS, param_acts
from gpuarena.store.result import Result


def tuning_ladder(workload: str, rows: list[Result], keys: list[str]):
    """Speed-up of each variant over `seed` (the article's code) on the same device and parameters,
    within one run (ratios across runs would carry the drift between them), at the run and setting
    where seed and the most variants ran.  A parameter that acts only through one part of a recipe
    (SCOPED_PARAMS: compile_mode) belongs to the recipe, not the setting: such a row is set against
    the same seed and labelled "variant (compile_mode=...)"."""
    by_setting: dict[tuple, list[dict]] = {}
    for r in rows:
        fixed = [k for k in r.params if k not in SCOPED_PARAMS]
        by_setting.setdefault((device_of(r), origin_run(r), params_text(r, fixed)), []).append(r)
    chosen: dict[str, tuple] = {}
    for setting, rs in by_setting.items():
        seed = next((r for r in rs if r.variant == "seed"), None)
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
                ratio, lo, hi = r.throughput_median / seed.throughput_median, None, None
            per_dev[dev][v] = (ratio, lo, hi)
            table_rows.append([dev, setting[1], params_text(seed, [k for k in keys if k not in SCOPED_PARAMS]) or "-",
                               v, ratio_text(ratio),
                               f"{lo:.2f} – {hi:.2f}" if lo is not None and math.isfinite(lo) else "-",
                               verdict(ratio, lo, hi)])
    variants = list(dict.fromkeys(v for d in per_dev.values() for v in sorted(d, key=lambda v: (v != "seed", v))))
    groups = [BarGroup(dev, [per_dev[dev].get(v, (None,))[0] for v in variants],
                       lo=[nan_none(per_dev[dev].get(v, (None, None))[1]) for v in variants],
                       hi=[nan_none(per_dev[dev].get(v, (None, None, None))[2]) for v in variants])
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


def recipe_label(r: Result, seed: Result) -> str:
    """The variant, with the recipe-scoped parameters it uses where they differ from seed's."""
    own = [f"{k}={v}" for k, v in r.params.items()
           if k in SCOPED_PARAMS and param_acts(k, r.variant) and v != seed.params.get(k)]
    return r.variant + (f" ({' '.join(own)})" if own else "")


def origin_run(r: Result) -> str:
    """The run that measured a result: an imported result keeps its measuring run in extra."""
    return str(r.extra.origin_run_id or r.run_id or "-")


def nan_none(x):
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def sort_value(r: Result, keys: list[str]):
    p = r.params
    return tuple(p.get(k) if isinstance(p.get(k), (int, float)) else 0 for k in keys)


def verdict(ratio, lo, hi) -> str:
    """The one verdict on a ratio and its interval (analysis/verbs/compare.py)."""
    return compare_verdict(ratio, lo, hi, published=False)


def against_reference(workload: str, rows: list[Result], keys: list[str]) -> Table | None:
    """gpuarena's fastest measured recipe on a GPU beside the published figures its workload class
    names for that GPU (``reference_as``: for ResNet-50 inference MLPerf's offline INT8 TensorRT
    figure), per GPU: how far the best rung stands from another engine's best.  Not the same
    recipe, so a share, never a verdict."""
    from gpuarena.data import catalog
    from gpuarena.analysis.rows.published import reference_rows
    from gpuarena.workloads import registry

    if workload not in registry.names():
        return None
    out = []
    for ref in reference_rows(registry.get(workload).reference_as):
        mine = [r for r in rows if r.source != "published" and r.throughput_median and not diverged(r)
                and r.gpus == 1 and getattr(catalog.find(r.device_name or ""), "name", None)
                == ref["gpu"]]
        if not mine:
            continue
        best = max(mine, key=lambda r: r.throughput_median)
        out.append([device_of(best), best.variant, params_text(best, keys) or "-", best.precision or "-",
                    fmt_num(best.throughput_median), f"{ref['name']}, {ref['precision']}, {ref['software']}",
                    fmt_num(ref["per_gpu"]) + (f" ({fmt_num(ref['per_gpu'] * ref['num_gpus'])} over "
                                               f"{ref['num_gpus']} GPUs)" if ref["num_gpus"] > 1 else ""),
                    pct(best.throughput_median / ref["per_gpu"]), ref["source"]])
    if not out:
        return None
    return Table(f"wl-{slug(workload)}-reference", [
        ("device", TEXT), ("gpuarena's fastest recipe", TEXT), ("params", TEXT), ("precision", TEXT),
        ("its median", NUMERIC), ("published best", PROSE), ("per GPU", NUMERIC), ("share", NUMERIC),
        ("source", PROSE)], out, "Against the published best",
        "The fastest measured recipe on the GPU beside the best published figure for the same model on the "
        "same GPU, another engine and precision (MLPerf: INT8 under TensorRT, offline scenario, no batch "
        "limit): the share is how far gpuarena's best rung is from it, not a like-for-like comparison.",
        details=("published best", "source"))
