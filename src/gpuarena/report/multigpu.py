"""Multi-GPU sections: data-parallel scaling against N, and collective bus bandwidth.

The multi-GPU workloads store their own figures in ``extra``; they are read
defensively (a missing field leaves a cell empty, it is never guessed).
Throughput of a ddp-train result is the whole job's (all ranks together).
"""

from __future__ import annotations

from gpuarena.report.build import NUMERIC, TEXT, Chart, Section, Table, fmt_num, pct


def _setting(r: dict) -> str:
    p = r.get("params") or {}
    shown = " ".join(f"{k}={p[k]}" for k in ("batch_size", "model") if k in p)
    return " · ".join(x for x in (r.get("device_name") or r.get("device") or "?", r["variant"], shown) if x)


def scaling(rows: list[dict]) -> Section:
    s = Section("scaling", "Data-parallel scaling (ddp-train)")
    groups: dict[str, dict[int, dict]] = {}
    for r in rows:
        groups.setdefault(_setting(r), {})[int(r.get("gpus") or 1)] = r
    table_rows, series = [], []
    for label, by_n in groups.items():
        base = by_n.get(1)
        xs, eff, pred_x, pred = [], [], [], []
        for n in sorted(by_n):
            r = by_n[n]
            extra = r.get("extra") or {}
            e = extra.get("scaling_efficiency")
            if e is None and base is not None:
                e = r["throughput_median"] / (n * base["throughput_median"])
            p = predicted_efficiency(r)
            table_rows.append([label, str(n), fmt_num(r["throughput_median"]), pct(e), pct(p),
                               fmt_num(extra.get("comm_s_per_step")), fmt_num(extra.get("busbw_gbs"))])
            if e is not None:
                xs.append(n)
                eff.append(e)
            if p is not None:
                pred_x.append(n)
                pred.append(p)
        if xs:
            series.append({"label": f"{label} (measured)", "x": xs, "y": eff})
        if pred_x:
            series.append({"label": f"{label} (model)", "x": pred_x, "y": pred, "dashed": True})
    unit = next((r.get("unit") for r in rows if r.get("unit")), "items/s")
    s.tables.append(Table("scaling-table", [("setting", TEXT), ("GPUs", NUMERIC), (f"job {unit}", NUMERIC),
                                            ("efficiency", NUMERIC), ("model predicts", NUMERIC),
                                            ("comm s/step", NUMERIC), ("bus GB/s", NUMERIC)], table_rows,
                          "Scaling efficiency",
                          "Efficiency = throughput on N GPUs / (N x throughput on one); the article reports "
                          "0.92 (A100) and 0.81 (A800) for 4-GPU ResNet-50."))
    if series:
        s.charts.append(Chart("scaling-chart", "Scaling efficiency vs GPUs", "lines_with_ci",
                              {"series": series, "xlabel": "GPUs", "ylabel": "efficiency", "ref": 1.0},
                              "measured scaling efficiency against GPU count, model prediction dashed"))
    return s


def predicted_efficiency(r: dict) -> float | None:
    """The interconnect model's prediction, when the result carries one or the model can give one."""
    extra = r.get("extra") or {}
    for k in ("predicted_efficiency", "model_efficiency"):
        if isinstance(extra.get(k), (int, float)):
            return float(extra[k])
    return None


def _size_bytes(r: dict) -> float | None:
    extra = r.get("extra") or {}
    if isinstance(extra.get("size_bytes"), (int, float)):
        return float(extra["size_bytes"])
    mb = (r.get("params") or {}).get("size_mb")
    return float(mb) * 2**20 if isinstance(mb, (int, float)) else None


def busbw(rows: list[dict]) -> Section:
    s = Section("busbw", "Collective bus bandwidth")
    groups: dict[str, list[tuple[float, float, float | None]]] = {}
    table_rows = []
    for r in rows:
        extra = r.get("extra") or {}
        size, bw = _size_bytes(r), extra.get("busbw_gbs")
        label = f"{r['workload']} · {r.get('device_name') or r.get('device')} x{r.get('gpus') or 1}"
        table_rows.append([label, fmt_num(size / 2**20) if size else "-", fmt_num(bw), fmt_num(extra.get("algbw_gbs"))])
        if size and isinstance(bw, (int, float)):
            groups.setdefault(label, []).append((size / 2**20, bw, None))
    s.tables.append(Table("busbw-table", [("collective", TEXT), ("message MiB", NUMERIC), ("bus GB/s", NUMERIC),
                                          ("algorithm GB/s", NUMERIC)], table_rows, "Bus bandwidth",
                          "Bus bandwidth as nccl-tests defines it: algorithm bandwidth x 2(n-1)/n for all-reduce."))
    series = [{"label": k, "x": [p[0] for p in sorted(v)], "y": [p[1] for p in sorted(v)]} for k, v in groups.items()]
    if series:
        s.charts.append(Chart("busbw-chart", "Bus bandwidth vs message size", "lines_with_ci",
                              {"series": series, "xlabel": "message size (MiB)", "ylabel": "bus GB/s", "logx": True},
                              "bus bandwidth against message size per collective and GPU count"))
    return s
