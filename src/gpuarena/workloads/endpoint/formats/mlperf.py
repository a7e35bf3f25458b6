"""MLPerf Inference loadgen ``mlperf_log_summary.txt`` (mlcommons/inference loadgen/results.cc):
``key : value`` lines, ``SUT name``, ``Scenario``, ``Mode``, and for the LLM benchmarks
(``use_token_latencies``) ``Completed samples per second``, ``Completed tokens per second``
(Server; Offline: ``Samples per second``, ``Tokens per second``), ``Mean latency (ns)``,
``NN.NN percentile latency (ns)``, ``Mean First Token latency (ns)``, ``NN.NN percentile first
token latency (ns)``, ``Mean Time to Output Token (ns)``, ``NN.NN percentile time to output token
(ns)``, ``Scheduled samples per second``, ``target_qps``.  No per-request records: the figures are
loadgen's.  Its percentiles are order statistics (the sample at index n * q, no interpolation) and
its Server samples per second count (samples - 1) over the time the last one completed.
"""

from __future__ import annotations

import re

from gpuarena.errors import UserError
from gpuarena.workloads.endpoint.formats import Parsed

LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.+?)\s*$")
PCT_WHY = "loadgen's percentile is the order statistic at n * q (no interpolation)"
TPOT_WHY = ("loadgen's time to output token, kept as loadgen's: the summary has no per-request records to "
            "recompute gpuarena's TPOT from")


def is_summary(text: str) -> bool:
    return "MLPerf Results Summary" in text or ("SUT name" in text and "Scenario" in text)


def _float(x):
    try:
        return float(str(x).split()[0])
    except (TypeError, ValueError, IndexError):
        return None


def summary(text: str, path: str) -> Parsed:
    kv = {m.group(1): m.group(2) for m in map(LINE.match, text.splitlines()) if m}
    if "Scenario" not in kv:
        raise UserError(f"{path}: an MLPerf summary without its 'Scenario :' line")

    def ns(k):
        x = _float(kv.get(k))
        return None if x is None else x / 1e6

    same = "the same definition"
    cmp = [("ttft_ms", "mean", ns("Mean First Token latency (ns)"), same, True),
           ("ttft_ms", "p50", ns("50.00 percentile first token latency (ns)"), PCT_WHY, True),
           ("ttft_ms", "p90", ns("90.00 percentile first token latency (ns)"), PCT_WHY, True),
           ("ttft_ms", "p99", ns("99.00 percentile first token latency (ns)"), PCT_WHY, True),
           ("tpot_ms", "mean", ns("Mean Time to Output Token (ns)"), TPOT_WHY, False),
           ("tpot_ms", "p99", ns("99.00 percentile time to output token (ns)"), TPOT_WHY, False),
           ("e2e_ms", "mean", ns("Mean latency (ns)"), same, True),
           ("e2e_ms", "p50", ns("50.00 percentile latency (ns)"), PCT_WHY, True),
           ("e2e_ms", "p90", ns("90.00 percentile latency (ns)"), PCT_WHY, True),
           ("e2e_ms", "p99", ns("99.00 percentile latency (ns)"), PCT_WHY, True),
           ("output_tokens_per_s", None, _float(kv.get("Completed tokens per second") or kv.get("Tokens per second")),
            "output tokens over the run's time in both", True),
           ("requests_per_s", None, _float(kv.get("Completed samples per second") or kv.get("Samples per second")),
            "a sample is a request; loadgen counts (samples - 1) over the time the last one completed", True)]
    if all(v is None for _, _, v, _, _ in cmp):
        raise UserError(f"{path}: an MLPerf summary without any latency or throughput line")
    meta = {"model": kv.get("SUT name"), "backend": f"MLPerf loadgen {kv.get('Scenario', '?')} scenario",
            "rate": _float(kv.get("Scheduled samples per second") or kv.get("target_qps")), "concurrency": None,
            "num_requests": None}
    tool_summary = {k: v for k, v in kv.items() if len(k) < 80 and not set(k) <= {"="}}
    return Parsed("mlperf loadgen", None, meta, tool_summary, None, {}, cmp)
