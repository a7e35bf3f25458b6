"""The report's served-engines section: endpoint-serve results side by side, like for like
(analysis/verbs/endpoints.py groups them and computes every figure; this only lays them out)."""

from __future__ import annotations

from gpuarena.analysis.verbs import frontier as F
from gpuarena.analysis.verbs.endpoints import engine_rows, own_loop_rows
from gpuarena.analysis.verbs.frontier import Curve, Point
from gpuarena.report.chartspec import FrontierCurve, FrontierPoint
from gpuarena.report.text.endpoints import OWN_NOTE, OWN_TITLE
from gpuarena.report.model import NUMERIC, PROSE, TEXT, Chart, Section, Table, pct
from gpuarena.numbers import fmt_num


def _n(x) -> str:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return "-"
    return f"{x:,}" if isinstance(x, int) else fmt_num(x)


def section(rows: list[dict]) -> Section | None:
    served = engine_rows(rows)   # the rows of workloads the class says are served engines
    if not served:
        return None
    s = Section("served-engines", "Served engines: throughput, latency and goodput at an SLO")
    s.paragraphs.append(
        "endpoint-serve drives a running OpenAI-compatible server (vLLM, SGLang, transformers serve, ...) with "
        "streamed requests. TTFT, TPOT, ITL and E2E are defined as in vLLM's benchmarks/benchmark_serving.py; "
        "goodput counts the requests that met both SLOs; within SLO is their share of all requests sent. "
        "Rows of one setting asked the same thing of each server. $/M tokens: the catalog's cloud price per "
        "GPU-hour over the output tokens delivered within the SLO (docs/serving-endpoints.md).")
    table = [[x.setting, x.gpu, x.engine, _n(x.rate) if x.rate not in (None, float("inf"))
              else "all at once", _n(x.concurrency), _n(x.output_tokens_per_s), _n(x.goodput_requests_per_s),
              pct(x.slo_attainment), _n(x.ttft_ms_p50), _n(x.ttft_ms_p99), _n(x.tpot_ms_p50),
              _n(x.tpot_ms_p99), _n(x.e2e_ms_p99), _n(x.joules_per_token),
              _n(x.usd_per_million_tokens_at_slo), str(x.failed or 0)] for x in served]
    s.tables.append(Table("endpoint-serve-table", [
        ("setting", PROSE), ("GPU", TEXT), ("engine", TEXT), ("req/s sent", NUMERIC), ("users", NUMERIC),
        ("output tok/s", NUMERIC),
        ("goodput req/s", NUMERIC), ("within SLO", NUMERIC), ("TTFT p50 ms", NUMERIC), ("TTFT p99 ms", NUMERIC),
        ("TPOT p50 ms", NUMERIC), ("TPOT p99 ms", NUMERIC), ("E2E p99 ms", NUMERIC), ("J/token", NUMERIC),
        ("cloud $/M tok at SLO", NUMERIC), ("failed", NUMERIC)], table, "served engines",
        details=("setting", "TTFT p99 ms", "TPOT p99 ms", "E2E p99 ms", "failed")))
    _frontier(s, F.curves(rows))
    own = own_loop_rows(rows)
    if own:
        s.tables.append(Table("endpoint-own-loop", [
            ("lengths", TEXT), ("GPU", TEXT), ("engine", TEXT), ("shape", TEXT), ("batch", NUMERIC),
            ("output tok/s", NUMERIC), ("TTFT ms", NUMERIC), ("TPOT p50 ms", NUMERIC), ("TPOT p99 ms", NUMERIC),
            ("J/token", NUMERIC)], [[x.lengths, x.gpu, x.engine, str(x.shape), _n(x.batch),
                                     _n(x.output_tokens_per_s), _n(x.ttft_ms), _n(x.tpot_ms_p50),
                                     _n(x.tpot_ms_p99), _n(x.joules_per_token)] for x in own],
            OWN_TITLE, OWN_NOTE))
    return s


def _point(p: Point) -> FrontierPoint:
    return FrontierPoint(p.per_user, p.per_gpu)


def _frontier(s: Section, curves: list[Curve]) -> None:
    """The frontier chart and the best point under the SLO of each curve (analysis/verbs/frontier.py)."""
    if not any(len(c.points) > 1 for c in curves):
        return
    settings = sorted({c.setting for c in curves})
    tag = (lambda c: f" [setting {settings.index(c.setting) + 1}]") if len(settings) > 1 else (lambda c: "")
    labels = [f"{c.engine} on {c.gpu}{tag(c)}" for c in curves]
    shown = [FrontierCurve(label, [_point(p) for p in c.points], [_point(p) for p in c.frontier],
                           _point(c.best) if c.best else None, c.slo_per_user) for c, label in zip(curves, labels)]
    s.charts.append(Chart("endpoint-frontier", "Output tokens/s per GPU against tokens/s per user (1 / median TPOT)",
                          "frontier", {"curves": shown, "xlabel": "tokens/s per user (1000 / TPOT p50 ms)",
                                       "ylabel": "output tokens/s per GPU"},
                          alt="; ".join(F.lines(curves))))
    s.tables.append(Table("endpoint-frontier-best", [
        ("engine on GPU", TEXT), ("setting", PROSE), ("points", NUMERIC), ("best under SLO", TEXT),
        ("tok/s per GPU", NUMERIC), ("tok/s per user", NUMERIC), ("SLO line tok/s per user", NUMERIC)],
        [[label, c.setting, str(len(c.points)), c.best.at if c.best else "none held",
          _n(c.best.per_gpu) if c.best else "-", _n(c.best.per_user) if c.best else "-",
          _n(c.slo_per_user)] for c, label in zip(curves, labels)],
        "the best point under the SLO, per engine and GPU",
        "every sweep point and timed pass counts; the frontier keeps the points no other beats on both axes; "
        "the best point is the one of most tokens/s per GPU among those holding the SLO attainment"))
