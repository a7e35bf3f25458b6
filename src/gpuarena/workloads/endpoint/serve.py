"""endpoint-serve: drive a running OpenAI-compatible server (vLLM, SGLang, TensorRT-LLM, NIM,
``transformers serve``, ``gpuarena serve-tiny``) the way vLLM's serving benchmark does, and keep
every request.

One step is one pass: ``num_requests`` streamed requests sent at ``rate`` (Poisson) or at a fixed
``concurrency``; item = output token, so the runner's throughput is output tokens/s and, with
NVML on a local server's GPU, its energy per item is joules per output token.  The runner's first
step (where other workloads compile) sends the ``warmup_requests`` and, with ``rate=sweep``, finds
the highest rate whose SLO attainment holds; the timed passes then run at that rate.  Per request:
TTFT, every inter-token gap, E2E, prompt and output tokens (metrics.py defines each figure as vLLM
does); per run: throughputs, p50/p90/p99, goodput and failures by kind, stored in ``extra``.
docs/serving-endpoints.md says how to point it at each engine.
"""

from __future__ import annotations

import os

from gpuarena.workloads.base import Workload
from gpuarena.workloads.endpoint import client, drive, load, mix, sweeps, trace
from gpuarena.workloads.endpoint import metrics as M
from gpuarena.workloads.endpoint.spec import EndpointServeSpec, engine_name, is_local

MAX_STORED_GAPS = 200_000      # beyond this many inter-token gaps a result keeps only their percentiles
LATE_S = 0.020                 # a request of a timed schedule sent later than this after its due time is late
WARMUP_SALT = 10_000_019       # the warm-up pass's seed salt: its requests go at once, a trace's times ignored


class EndpointServe(EndpointServeSpec, Workload):
    # --- building -------------------------------------------------------------------
    # --- building -------------------------------------------------------------------
    def setup(self) -> None:
        p = self.p
        self.base = p["base_url"]
        self.api = p["api"]
        self.url = self.base + client.PATHS[self.api]
        self.hdrs = client.headers(os.environ.get(p["api_key_env"]))
        self.info = load.probe(self.base, self.hdrs)
        self.engine = engine_name(p, self.info)
        self.model = p["model"] or (self.info.get("models") or [None])[0]
        if not self.model:
            why = (self.info.get("why") or "no server answers there") if not self.info["reachable"] \
                else "its /v1/models lists none"
            raise RuntimeError(f"endpoint-serve: cannot learn the model name from {self.base}/v1/models ({why}); "
                               "start the server or set model=NAME")
        self.local = is_local(p)
        self.power_measured = self.local       # the runner drops NVML figures of a remote server
        self.file = load.read_prompts(p["prompts_file"]) if p["prompts_file"] else None
        self.trace = trace.read(p["trace_file"], p["trace_time_unit"]) if p["trace_file"] else None
        self.mix = mix.Mix(p)
        self.rate = None if p["rate"] == "sweep" else float(p["rate"])
        self.concurrency = None if p["concurrency"] == "sweep" else p["concurrency"]
        self.passes: list[tuple[list[M.Record], float]] = []
        self.stopped: list[str] = []
        self.sweep: dict = {}
        self.warm: dict | None = None

    def _sessions(self, n: int, salt: int, timed: bool = True) -> list[mix.Session]:
        """n requests of the mix (a trace: its first n lines, at their times unless ``timed`` is false,
        as for the warm-up; a prompts file: its rows in turn)."""
        p = self.p
        if self.trace:
            return self.trace[:n] if timed else [mix.Session(s.turns, None, s.hash_ids) for s in self.trace[:n]]
        if self.file:
            start = salt * n
            rows = [self.file[(start + i) % len(self.file)] for i in range(n)]
            t = p["turns"]
            return [mix.Session([mix.Turn(None, r["max_tokens"], r["prompt"]) for r in rows[i:i + t]])
                    for i in range(0, n, t)]
        return self.mix.sessions(n, p["seed"] * 100_003 + salt)

    def _pass(self, n: int, rate: float, salt: int, concurrency: int | None = None, sweep: bool = False,
              deadline_s: float = 0.0) -> tuple[list[M.Record], float, str | None]:
        """One pass of n requests: (records, duration, why it stopped early or None).  A sweep's
        pass always stops when the server is overloaded and at its deadline."""
        p = self.p
        sessions = self._sessions(n, salt, timed=salt != WARMUP_SALT)
        plan = drive.Plan(self.url, self.api, self.model, self.hdrs, p["output_len"], p["ignore_eos"],
                          self.concurrency if concurrency is None else concurrency, p["request_timeout_s"],
                          p["think_time_s"], p["duration_s"], deadline_s,
                          (p["slo_ttft_ms"], p["slo_tpot_ms"]) if sweep or p["stop_overloaded"] else None,
                          p["seed"] * 100_003 + salt, p["trace_block"])
        waits = load.waits(len(sessions), rate, p["seed"] * 7919 + salt, p["load_shape"], p["ramp_start_rate"],
                           p["burst_size"])
        return drive.run(plan, sessions, waits)

    # --- one pass ---------------------------------------------------------------------
    def step(self) -> None:
        if self.warm is None:
            self._first()
            return
        recs, dur, stopped = self._pass(self.p["num_requests"], self.rate, len(self.passes) + 1)
        if not any(r.ok for r in recs):
            raise RuntimeError(f"endpoint-serve: every request of a pass to {self.url} failed: "
                               f"{failures(recs) or stopped}")
        self.passes.append((recs, dur))
        if stopped:
            self.stopped.append(f"pass {len(self.passes)}: {stopped}")

    def _first(self) -> None:
        """Warm-up requests (all failing ends the case, as vLLM's initial test request does), then the sweep."""
        n = self.p["warmup_requests"]
        recs, dur = ([], 0.0)
        if n:
            recs, dur, _ = self._pass(n, float("inf"), WARMUP_SALT, concurrency=self.concurrency or 0)
        if recs and not any(r.ok for r in recs):
            raise RuntimeError(f"endpoint-serve: the warm-up request(s) to {self.url} failed: {failures(recs)}")
        self.warm = {"requests": n, "failed": sum(not r.ok for r in recs), "duration_s": dur}
        if self.rate is None:
            self.rate = sweeps.rate(self)
        elif self.concurrency is None:
            self.concurrency = sweeps.concurrency(self)

    # --- figures ---------------------------------------------------------------------
    def items_per_step(self) -> float:
        """Output tokens of a timed pass (their mean over the passes; failed requests count none)."""
        if not self.passes:
            return float(self.p["num_requests"] * self.p["output_len"])
        return sum(sum(r.output_tokens for r in recs if r.ok) for recs, _ in self.passes) / len(self.passes)

    def flops_per_item(self):
        return None

    def precision(self) -> str:
        return "n/a"

    def _records(self) -> list[M.Record]:
        return [r for recs, _ in self.passes for r in recs]

    def check(self) -> list[str]:
        recs = self._records()
        notes = []
        bad = [r for r in recs if not r.ok]
        if bad:
            notes.append(f"{len(bad)} of {len(recs)} requests failed: {failures(recs)}")
        if any(r.ok and r.tokens_from == "counted" for r in recs):
            notes.append("the server gave no usage: output tokens counted as the words of each streamed chunk "
                         "(at least one a chunk; a word may be more than one token)")
        # a trace or a finite rate without a cap is a schedule the client must keep (rate inf sends at once,
        # and a cap makes requests wait for a slot by design)
        if (self.trace or self.rate != float("inf")) and not self.concurrency:
            late = [r for r in recs if r.due is not None and r.sent - r.due > LATE_S]
            if late:
                worst = max(r.sent - r.due for r in late)
                notes.append(f"{len(late)} of {len(recs)} requests were sent more than {LATE_S * 1e3:g} ms after their "
                             f"due time (up to {worst * 1e3:.0f} ms): the client did not keep the arrival schedule "
                             "(a busy client machine?), so the load was lighter than asked")
        if (self.sweep or {}).get("none_held"):
            notes.append(self.sweep["none_held"])
        notes += [f"stopped early, {x}" for x in self.stopped]
        short = [r for r in recs if r.ok and r.asked and r.output_tokens != r.asked]
        if short:
            notes.append(f"{len(short)} requests generated other than the max_tokens they asked for "
                         "(the server may not honour ignore_eos)")
        return notes

    def extra(self) -> dict:
        p = self.p
        recs = self._records()
        duration = sum(d for _, d in self.passes)
        out = {"engine": self.engine, "model": self.model, "api": self.api, "endpoint": self.url,
               "server_local": self.local, "server_gpus": p["server_gpus"], "served_models": self.info.get("models"),
               "rate_requests_per_s": self.rate, "concurrency": self.concurrency or None, "warmup": self.warm,
               "metrics_definition": "vLLM benchmarks/benchmark_serving.py calculate_metrics"}
        if self.sweep:
            out["sweep"] = self.sweep
        if self.stopped:
            out["stopped"] = self.stopped
        if not recs:
            return out
        out.update(M.summarize(recs, duration, p["slo_ttft_ms"], p["slo_tpot_ms"]))
        out["passes"] = [{k: v for k, v in M.summarize(r, d, p["slo_ttft_ms"], p["slo_tpot_ms"]).items()
                          if k in ("duration_s", "completed", "failed", "output_tokens_per_s",
                                   "goodput_requests_per_s", "slo_attainment")} for r, d in self.passes]
        keep_gaps = sum(len(r.gaps) for r in recs) <= MAX_STORED_GAPS
        out["requests_stored_with_gaps"] = keep_gaps
        out["request_records"] = [r.to_dict(gaps=keep_gaps) for r in recs]
        return out


def failures(recs: list[M.Record]) -> str:
    """'3 http_5xx, 1 timeout (first: HTTP 500: ...)'."""
    counts = M.errors_by_kind(recs)
    first = next((r.detail for r in recs if not r.ok), "")
    return ", ".join(f"{n} {k}" for k, n in counts.items()) + (f" (first: {first})" if first else "")
