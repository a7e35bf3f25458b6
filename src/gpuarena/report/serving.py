"""The serving section: llm-serve's throughput-latency curves, the batch that meets the
per-token SLO, decode's share of the measured copy bandwidth, and the KV-cache
concurrency of the catalog's GPUs at the measured context (analysis/verbs/serving.py)."""

from __future__ import annotations

from gpuarena.analysis.verbs import serving as S
from gpuarena.analysis.verbs.serving_curves import ServingCurve, curves
from gpuarena.analysis.physics.serving_model import PRECISIONS
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.report.chartspec import Series
from gpuarena.report.model import NUMERIC, TEXT, Chart, Section, Table, pct
from gpuarena.numbers import fmt_bytes, fmt_num
from gpuarena.store.result import Result
from gpuarena.workloads import registry


def _ms(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def versions_text(c: ServingCurve) -> str:
    """Which engine code timed a curve's points (issue 23): today's version, and the older ones whose
    points no later version changed; or the version of a superseded curve and what changed it."""
    if c.version is None:
        return ""
    text = f" · llm-serve v{c.version}"
    older = [v for v in c.timed_by if v != c.version]
    if c.current and older:
        return text + f" (points timed by {', '.join(f'v{v}' for v in c.timed_by)}, unchanged since)"
    if c.changed_by:
        return text + f" (superseded: changed by {', '.join(f'v{v}' for v in c.changed_by)})"
    return text


def section(rows: list[Result], pool=None) -> Section | None:
    """None when no llm-serve result measured its per-token times.  The membw ceiling may come
    from any run in the store (it is a fact of the GPU, measured once)."""
    copies = [r for r in (pool.results(status="ok") if pool is not None else [])
              if registry.has(r.workload, device_figure="memory-bandwidth")]
    ceilings = rows + copies
    sets = curves(rows, ceilings)
    if not sets:
        return None
    s = Section("serving", "Serving (llm-serve)")
    s.paragraphs.append(
        "One step is one request batch: the prompt's prefill (time to first token, TTFT), then greedy decode "
        "steps, each timed by CUDA events read once at the end of the request. TPOT = time per output token. "
        "Decode bytes = every weight once plus the live KV cache; its bandwidth over the best membw copy "
        "measured on the same GPU is the share of the memory ceiling decode reaches. A curve is one engine "
        "recipe: today's llm-serve joins the batches an older version timed where no version since changed "
        "the code that timed them (llm/versions.py); a point a later version changed keeps a curve of its "
        "own version, marked superseded.")
    table, series, capacity = [], [], []
    for c in sets:
        label = (f"{c.gpu} · {c.variant}, {c.attention} decode attention, {c.prefill} prefill · "
                 f"{c.model} · prompt {c.prompt_len} + {c.new_tokens}" + versions_text(c))
        for p in c.points:
            table.append([label, str(p.batch), _ms(p.ttft_ms), fmt_num(p.prefill_tokens_per_s),
                          pct(p.prefill_mfu), _ms(p.tpot_ms_median), _ms(p.tpot_ms_p99),
                          fmt_num(p.decode_tokens_per_s), fmt_num(p.tokens_per_s),
                          fmt_num(p.decode_bandwidth_gbs), pct(p.decode_share_of_membw),
                          fmt_bytes(p.peak_memory_bytes) if p.peak_memory_bytes else "-"])
        if len(c.points) > 1:
            series.append(Series(label, [p.tpot_ms_median for p in c.points],
                                 [p.decode_tokens_per_s for p in c.points]))
        capacity.append([label, f"{c.slo_ms:g}", "none" if c.slo_batch is None else str(c.slo_batch),
                         str(c.largest_fit), "-" if c.oom_batch is None else str(c.oom_batch)])
    s.tables.append(Table("serving-curve", [("setting", TEXT), ("batch", NUMERIC), ("TTFT ms", NUMERIC),
                                            ("prefill tok/s", NUMERIC), ("prefill MFU", NUMERIC),
                                            ("TPOT ms", NUMERIC), ("TPOT p99 ms", NUMERIC),
                                            ("decode tok/s", NUMERIC), ("request tok/s", NUMERIC),
                                            ("decode GB/s", NUMERIC), ("of membw", NUMERIC), ("peak mem", NUMERIC)],
                          table, "Throughput and latency by batch",
                          "Request tok/s = generated tokens over the whole request (prefill included); decode tok/s = "
                          "batch / median TPOT. Prefill MFU against the catalog's dense peak.",
                          details=("prefill tok/s", "decode GB/s", "peak mem")))
    s.tables.append(Table("serving-slo", [("setting", TEXT), ("p99 TPOT SLO ms", NUMERIC),
                                          ("largest batch within it", NUMERIC), ("largest batch measured", NUMERIC),
                                          ("out of memory at", NUMERIC)],
                          capacity, "SLO capacity by engine recipe",
                          "The largest measured batch whose p99 time per output token meets the setting's SLO "
                          "(llm-serve's slo_ms); a batch that ran out of memory bounds it from above."))
    if series:
        s.charts.append(Chart("serving-chart", "Decode tokens/s against time per output token", "lines_with_ci",
                              {"series": series, "xlabel": "median TPOT (ms)", "ylabel": "decode tokens/s"},
                              "decode throughput against per-token latency, one point per batch"))
    full = [c for c in sets if c.size != "tiny"]
    if full:
        try:
            s.subsections.append(kv_section(full[0], rows))
        except UserError as exc:   # an imported result's hf_config names a file of another machine
            s.paragraphs.append(f"The KV-cache table by GPU is left out: {exc}")
    return s


def kv_section(c: ServingCurve, rows: list[Result]) -> Section:
    """The catalog's GPUs serving the measured model at its measured context, by the model."""
    context = c.prompt_len + c.new_tokens
    prec = c.precision if c.precision in PRECISIONS else "bf16"     # the measured weights' precision
    adv = S.advise(rows, S.sets_for(c.model, context) + [f"precision={prec}"])
    sec = Section("serving-kv", f"KV-cache concurrency at {context:,} tokens, by GPU (model, {prec} weights)")
    sec.paragraphs.append(adv.explanation)
    here = catalog.identity(c.gpu)
    sec.tables.append(Table("serving-kv-table", [("GPU", TEXT), ("memory GB", NUMERIC), ("max sequences", NUMERIC),
                                                 ("tok/s at max", NUMERIC), ("tok/s at 1", NUMERIC), ("bound", TEXT)],
                            [[x.gpu + (" (measured here)" if x.gpu == here else ""), fmt_num(x.memory_gb),
                              str(x.max_batch), fmt_num(x.tokens_per_s), fmt_num(x.tokens_per_s_batch1),
                              x.bound] for x in adv.rows],
                            "Largest concurrency and projected decode speed",
                            f"{adv.overhead_fraction:.0%} of memory kept back; bandwidth share "
                            f"{adv.bandwidth_share:.0%} ({adv.bandwidth_share_from})."))
    return sec

