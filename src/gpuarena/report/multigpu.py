"""Multi-GPU sections: data-parallel scaling against N, and collective bus bandwidth.

The multi-GPU workloads store their own figures in ``extra``; they are read
defensively (a missing field leaves a cell empty, it is never guessed).
Throughput of a ddp-train result is the whole job's (all ranks together).
"""

from __future__ import annotations

import math

from gpuarena.analysis.rows import common as R
from gpuarena.analysis.physics import whatif
from gpuarena.analysis.physics.whatif import WhatIf
from gpuarena.errors import UserError
from gpuarena.report.chartspec import Series
from gpuarena.report.model import NUMERIC, TEXT, Chart, Section, Table, pct
from gpuarena.numbers import fmt_num
from gpuarena.workloads import registry
from gpuarena.store.result import Result


def _setting(r: Result) -> str:
    p = r.params
    shown = " ".join(f"{k}={p[k]}" for k in ("batch_size", "model") if k in p)
    return " · ".join(x for x in (r.device_name or r.device or "?", r.variant, shown) if x)


MODEL_NS = (1, 2, 4, 8)                     # the model's curve: the usual sizes of one node


def scaling(rows: list[Result], pool=None) -> Section:
    s = Section("scaling", "Data-parallel scaling (ddp-train)")
    groups: dict[str, dict[int, dict]] = {}
    for r in rows:
        groups.setdefault(_setting(r), {})[r.gpus] = r
    table_rows, series, model_series, notes = [], [], {}, {}
    single: list[tuple[int, float]] = []   # settings measured at one N only: one marker for them all
    for label, by_n in groups.items():
        model, why = whatif_model(pool, by_n)
        model_eff = {m.n: m.efficiency for m in (model.rows if model else [])}
        xs, eff, pred_x, pred = _measured(label, by_n, model_eff, table_rows)
        if len(xs) > 1:
            series.append(Series(f"{label} (measured)", xs, eff))
        elif xs:
            single.append((xs[0], eff[0]))
        key = (_device(by_n), _model_name(by_n))
        if model:
            # One model line per GPU and model: the variants' predictions differ only through their
            # single-GPU speed, and a line per variant would hide the measured points.
            if key not in model_series or _is_seed(by_n):
                model_series[key] = Series(f"{key[0]} · {key[1]} (whatif model)", [m.n for m in model.rows],
                                           [m.efficiency for m in model.rows], dashed=True)
            notes[key] = _model_note(key, model)
        elif why:
            notes.setdefault(key, f"{key[0]} · {key[1]}: no model prediction ({why}).")
        elif pred_x:
            series.append(Series(f"{label} (model)", pred_x, pred, dashed=True))
    unit = next((r.unit for r in rows if r.unit), "items/s")
    s.paragraphs += ["Interconnect model (gpuarena whatif): " + n for n in notes.values()]
    if all(n == 1 for by_n in groups.values() for n in by_n):
        s.paragraphs.append("Every ddp-train result here ran on one GPU, so the measured efficiency is 1 by "
                            "definition; the dashed lines are the model's prediction for more GPUs, to be "
                            "checked by a multi-GPU run.")
    s.tables.append(_scaling_table(table_rows, unit))
    if single:
        pts = sorted(set(single))
        series.append(Series("measured, settings run at one size only", [p[0] for p in pts], [p[1] for p in pts]))
    series += list(model_series.values())
    if series:
        s.charts.append(_scaling_chart(series))
    return s


def _measured(label: str, by_n: dict[int, dict], model_eff: dict, table_rows: list) -> tuple[list, ...]:
    """One setting's table rows (appended to table_rows), its measured and its predicted efficiencies."""
    base = by_n.get(1)
    xs, eff, pred_x, pred = [], [], [], []
    for n in sorted(by_n):
        r = by_n[n]
        e = r.derived.scaling_efficiency
        if e is None and base is not None:
            e = r.throughput_median / (n * base.throughput_median)
        p = model_eff.get(n)
        exposed = r.extra.comm_exposed_s
        table_rows.append([label, str(n), fmt_num(r.throughput_median), pct(e), pct(p),
                           fmt_num(exposed * 1e3) if exposed is not None else "-"])
        if e is not None:
            xs.append(n)
            eff.append(e)
        if p is not None:
            pred_x.append(n)
            pred.append(p)
    return xs, eff, pred_x, pred


def _model_note(key: tuple[str, str], model: WhatIf) -> str:
    return (f"{key[0]} · {key[1]}: gradients {model.grad_bytes / 1e6:.0f} MB all-reduced in a ring "
            f"at {model.busbw_gbs:.0f} GB/s ({model.busbw_from}), overlap {model.overlap:.2f} "
            f"({model.overlap_from}), compute {model.compute_s * 1e3:.1f} ms per step of "
            f"batch {model.batch_size}; predicted efficiency at "
            + ", ".join(f"{m.n} GPUs {m.efficiency:.1%}" for m in model.rows if m.n > 1)
            + ".")


def _scaling_table(table_rows: list, unit: str) -> Table:
    return Table("scaling-table", [("setting", TEXT), ("GPUs", NUMERIC), (f"job {unit}", NUMERIC),
                                   ("efficiency", NUMERIC), ("model predicts", NUMERIC),
                                   ("exposed sync ms/step", NUMERIC)], table_rows,
                 "Scaling efficiency",
                 "Efficiency = throughput on N GPUs / (N x throughput on one); the article reports "
                 "0.92 (A100) and 0.81 (A800) for 4-GPU ResNet-50. Exposed sync = a step with "
                 "gradient all-reduce minus one under no_sync().")


def _scaling_chart(series: list[Series]) -> Chart:
    # efficiencies sit near 1: start the axis under the lowest one, not at 0, or they all look alike
    low = min([y for x in series for y in x.y if y is not None] or [0.0])
    bottom = max(0.0, math.floor((low - 0.02) * 20) / 20)
    return Chart("scaling-chart", "Scaling efficiency vs GPUs", "lines_with_ci",
                 {"series": series, "xlabel": "GPUs", "ylabel": "efficiency", "ref": 1.0,
                  "ybottom": bottom},
                 "measured scaling efficiency against GPU count, model prediction dashed")


def _device(by_n: dict[int, dict]) -> str:
    r = next(iter(by_n.values()))
    return r.device_name or r.device or "?"


def _model_name(by_n: dict[int, dict]) -> str:
    r = next(iter(by_n.values()))
    return str(r.params.get("model") or r.extra.model or r.workload)


def _is_seed(by_n: dict[int, dict]) -> bool:
    return next(iter(by_n.values())).variant == "seed"


def whatif_model(pool, by_n: dict[int, dict]) -> tuple[WhatIf | None, str]:
    """gpuarena.analysis.physics.whatif.predict for one setting, from its one-GPU throughput; (None, why) when
    the model cannot say."""
    r = by_n[min(by_n)]
    inner = registry.ddp_models().get(_model_name(by_n))
    workload = inner.name if inner is not None and inner.param_count(inner.resolve_params({})) else None
    if workload is None:
        return None, f"whatif does not know the gradient size of {_model_name(by_n)}"
    p = r.params
    batch = p.get("batch_size") or (r.extra.inner_params or {}).get("batch_size")
    one = by_n.get(1)
    per_gpu = one.throughput_median if one else None
    ns = sorted(set(MODEL_NS) | set(by_n))
    try:
        return whatif.predict(workload, _device(by_n), ns, store=pool, batch_size=batch, throughput=per_gpu), ""
    except UserError as exc:
        return None, str(exc)


def busbw(rows: list[Result]) -> Section:
    s = Section("busbw", "Collective bus bandwidth")
    groups: dict[str, list[tuple[float, float, float | None]]] = {}
    table_rows = []
    rows = sorted(rows, key=lambda r: (registry.fact(r.workload, "report_order", 9), r.workload, r.gpus,
                                       R.message_bytes(r) or 0))
    for r in rows:
        size, bw = R.message_bytes(r), r.extra.busbw_gbs
        label = f"{r.workload} · {r.device_name or r.device} x{r.gpus}"
        table_rows.append([label, fmt_num(size / 2**20) if size else "-", fmt_num(bw), fmt_num(r.extra.algbw_gbs)])
        if size and bw is not None:
            groups.setdefault(label, []).append((size / 2**20, bw, None))
    s.tables.append(Table("busbw-table", [("collective", TEXT), ("message MiB", NUMERIC), ("bus GB/s", NUMERIC),
                                          ("algorithm GB/s", NUMERIC)], table_rows, "Bus bandwidth",
                          "Bus bandwidth as nccl-tests defines it: algorithm bandwidth x 2(n-1)/n for all-reduce, "
                          "x (n-1)/n for all-gather and reduce-scatter, x 1 for broadcast."))
    series = [Series(k, [p[0] for p in sorted(v)], [p[1] for p in sorted(v)]) for k, v in groups.items()]
    if series:
        s.charts.append(Chart("busbw-chart", "Bus bandwidth vs message size", "lines_with_ci",
                              {"series": series, "xlabel": "message size (MiB)", "ylabel": "bus GB/s", "logx": True},
                              "bus bandwidth against message size per collective and GPU count"))
    return s
