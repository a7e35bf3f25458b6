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
import re
import socket

from gpuarena.errors import UserError
from gpuarena.store.workload_figures import EndpointFigures
from gpuarena.workloads.base import Param, Workload
from gpuarena.workloads.endpoint import client, load
from gpuarena.workloads.endpoint import metrics as M

LOOPBACK = ("localhost", "127.0.0.1", "::1", "0.0.0.0", "ip6-localhost")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
MAX_STORED_GAPS = 200_000      # beyond this many inter-token gaps a result keeps only their percentiles


def engine_name(params: dict, info: dict) -> str:
    """The engine as stored: the ``engine`` parameter, else what the server says (owner and version)."""
    if params.get("engine"):
        return params["engine"]
    parts = [info.get("owned_by") or "unknown engine", info.get("version")]
    return " ".join(p for p in parts if p)


def is_local(params: dict) -> bool:
    """Whether the server runs on this machine (so this machine's GPU power is the server's)."""
    if params["local"] != "auto":
        return params["local"] == "yes"
    host = load.split_url(params["base_url"])[1]
    return host in LOOPBACK or host.startswith("127.") or host == socket.gethostname()


class EndpointServe(Workload):
    name = "endpoint-serve"
    figures = EndpointFigures
    version = 1
    description = ("a running OpenAI-compatible server (vLLM, SGLang, transformers serve ...) under streamed "
                   "requests; item = output token; TTFT/TPOT/ITL/E2E percentiles and goodput at an SLO")
    item = "token"
    unit = "tokens/s"
    source = "issue 25; metrics as vLLM benchmarks/benchmark_serving.py defines them"
    kind = "inference"
    physics = "endpoint"
    dominant_op = "matmul"
    advised_by = ("its measured figures: `gpuarena cost -w endpoint-serve` ($ per million output tokens at the "
                  "SLO) and `gpuarena compare` across GPUs of one engine")
    # Parameters that say where the server is, not what it is asked: equal figures may differ in them.
    where_params = ("base_url", "api_key_env", "local", "engine")
    drives_server = True     # the GPU is busy with the server by design: `run` skips its busy check
    params = (
        Param("base_url", str, "http://127.0.0.1:8000", "the server's address (without /v1)"),
        Param("api", str, "completions", "OpenAI API: completions (/v1/completions) or chat "
              "(/v1/chat/completions)", choices=("completions", "chat")),
        Param("model", str, "", "model name sent with each request; empty: the first of /v1/models"),
        Param("api_key_env", str, "OPENAI_API_KEY", "environment variable holding the API key (the key is "
              "read at run time and never stored)"),
        Param("engine", str, "", "engine name and version to store; empty: asked from /version and /v1/models"),
        Param("prompt_len", int, 512, "prompt length in words (about one token each; the server's usage "
              "is stored)", tiny=16, min=1, max=1_000_000),
        Param("output_len", int, 128, "output tokens asked per request (max_tokens, ignore_eos)", tiny=8,
              min=1, max=1_000_000),
        Param("prompts_file", str, "", "a JSONL file of prompts (\"prompt\" or \"messages\", optional "
              "\"max_tokens\") used in turn instead of random words"),
        Param("rate", str, "inf", "requests per second (Poisson arrivals), inf (all at once) or sweep (the "
              "highest rate holding the SLO attainment)"),
        Param("concurrency", int, 0, "most requests in flight (0: no cap); with rate=inf a fixed concurrency",
              min=0, max=100_000),
        Param("num_requests", int, 200, "requests per timed pass (one pass per repeat)", tiny=8,
              min=1, max=1_000_000),
        Param("warmup_requests", int, 4, "requests sent before the timed passes and not counted", tiny=1,
              min=0, max=100_000),
        Param("slo_ttft_ms", float, 1000.0, "time-to-first-token objective (ms) for goodput", min=0.001, max=1e9),
        Param("slo_tpot_ms", float, 50.0, "time-per-output-token objective (ms) for goodput", min=0.001, max=1e9),
        Param("slo_attainment", float, 0.9, "share of requests that must meet both SLOs for a rate to hold "
              "(rate=sweep)", min=0.01, max=1.0),
        Param("sweep_start", float, 1.0, "first rate a sweep tries (requests/s)", min=1e-3, max=1e6),
        Param("sweep_max", float, 512.0, "highest rate a sweep tries (requests/s)", tiny=64.0, min=1e-3, max=1e6),
        Param("sweep_refine", int, 3, "bisections between the last rate that held and the first that did not",
              tiny=2, min=0, max=20),
        Param("request_timeout_s", float, 600.0, "a request not finished by then is a timeout failure",
              tiny=60.0, min=0.01, max=86400),
        Param("ignore_eos", bool, True, "ask the server to generate max_tokens whatever the text (vLLM, SGLang)"),
        Param("local", str, "auto", "the server runs on this machine's GPU, so its power and energy per "
              "token are measured: auto (a loopback address), yes or no", choices=("auto", "yes", "no")),
        Param("server_gpus", int, 1, "GPUs the server uses (tensor parallel): cost is per GPU", min=1, max=4096),
        Param("seed", int, 0, "seed of the prompts and arrival times", min=0, max=2**31 - 1),
    )
    variants = {"seed": "streamed requests as vLLM's serving benchmark sends them"}
    default_warmup = 0       # warm-up is warmup_requests, sent by the first step
    default_steps = 1
    tiny_warmup = 0
    tiny_steps = 1
    default_repeats = 3      # timed passes (spec/model.py reads it when --repeats is not given)

    # --- parameters, checked before any run exists ----------------------------------
    @classmethod
    def resolve_params(cls, given, size="full"):
        p = super().resolve_params(given, size)
        rate = load.parse_rate(p["rate"])
        p["rate"] = rate if rate == "sweep" else ("inf" if rate == float("inf") else f"{rate:g}")
        base, _ = load.split_url(p["base_url"])
        p["base_url"] = base
        if not ENV_NAME.match(p["api_key_env"]):
            raise UserError(f"api_key_env={p['api_key_env']!r}: the NAME of an environment variable that holds "
                            "the key (the key itself is never a parameter: it would be stored)")
        if p["sweep_max"] < p["sweep_start"]:
            raise UserError(f"sweep_max={p['sweep_max']:g} is below sweep_start={p['sweep_start']:g}")
        return p

    @classmethod
    def check_params(cls, params: dict) -> None:
        if params["prompts_file"]:
            load.read_prompts(params["prompts_file"])

    @classmethod
    def environment(cls, params: dict) -> dict:
        """The server's part of the environment fingerprint (its engine and models)."""
        info = load.probe(params["base_url"], client.headers(os.environ.get(params["api_key_env"])))
        return {"base_url": params["base_url"], "engine": engine_name(params, info),
                "reachable": info["reachable"], "models": info.get("models")}

    @classmethod
    def executed_precision(cls, variants, arch, params=None) -> dict[str, str]:
        return dict.fromkeys(("matmul", "conv", "attention", "elementwise"), "n/a")

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
        self.rate = None if p["rate"] == "sweep" else float(p["rate"])
        self.passes: list[tuple[list[M.Record], float]] = []
        self.sweep: dict = {}
        self.warm: dict | None = None

    def _bodies(self, n: int, salt: int) -> list[dict]:
        p = self.p
        if self.file:
            start = salt * n
            rows = [self.file[(start + i) % len(self.file)] for i in range(n)]
            return [client.payload(self.api, self.model, r["prompt"], r["max_tokens"] or p["output_len"],
                                   p["ignore_eos"]) for r in rows]
        prompts = load.random_prompts(n, p["prompt_len"], p["seed"] * 100_003 + salt)
        return [client.payload(self.api, self.model, t, p["output_len"], p["ignore_eos"]) for t in prompts]

    def _pass(self, n: int, rate: float, salt: int) -> tuple[list[M.Record], float]:
        p = self.p
        return load.run_pass(self.url, self.api, self._bodies(n, salt), self.hdrs, rate, p["concurrency"],
                             p["request_timeout_s"], p["seed"] * 7919 + salt)

    # --- one pass ---------------------------------------------------------------------
    def step(self) -> None:
        if self.warm is None:
            self._first()
            return
        recs, dur = self._pass(self.p["num_requests"], self.rate, len(self.passes) + 1)
        if not any(r.ok for r in recs):
            raise RuntimeError(f"endpoint-serve: every request of a pass to {self.url} failed: {failures(recs)}")
        self.passes.append((recs, dur))

    def _first(self) -> None:
        """Warm-up requests (all failing ends the case, as vLLM's initial test request does), then the sweep."""
        n = self.p["warmup_requests"]
        recs, dur = self._pass(n, float("inf"), 10_000_019) if n else ([], 0.0)
        if recs and not any(r.ok for r in recs):
            raise RuntimeError(f"endpoint-serve: the warm-up request(s) to {self.url} failed: {failures(recs)}")
        self.warm = {"requests": n, "failed": sum(not r.ok for r in recs), "duration_s": dur}
        if self.rate is None:
            self.rate = self._search()

    def _search(self) -> float:
        p = self.p
        seen: dict[float, dict] = {}

        def holds(rate: float) -> bool:
            recs, dur = self._pass(p["num_requests"], rate, 20_000_000 + len(seen))
            s = M.summarize(recs, dur, p["slo_ttft_ms"], p["slo_tpot_ms"])
            seen[rate] = s
            return s["slo_attainment"] >= p["slo_attainment"]

        best, tried = M.search_rate(holds, p["sweep_start"], p["sweep_max"], p["sweep_refine"])
        self.sweep = {"best_rate": best, "target_attainment": p["slo_attainment"], "tried": [
            {"rate": r, "holds": ok, "slo_attainment": seen[r]["slo_attainment"],
             "goodput_requests_per_s": seen[r]["goodput_requests_per_s"],
             "output_tokens_per_s": seen[r]["output_tokens_per_s"], "failed": seen[r]["failed"]}
            for r, ok in tried]}
        if best is None:
            low = min(seen)
            raise RuntimeError(f"endpoint-serve: no rate from {low:g} req/s up holds {p['slo_attainment']:.0%} of "
                               f"requests within TTFT {p['slo_ttft_ms']:g} ms and TPOT {p['slo_tpot_ms']:g} ms "
                               f"(at {low:g} req/s: {seen[low]['slo_attainment']:.0%})")
        return best

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
            notes.append("the server gave no usage: output tokens counted as streamed chunks (a chunk may hold more)")
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
               "rate_requests_per_s": self.rate, "concurrency": p["concurrency"] or None, "warmup": self.warm,
               "metrics_definition": "vLLM benchmarks/benchmark_serving.py calculate_metrics"}
        if self.sweep:
            out["sweep"] = self.sweep
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
