"""endpoint-serve's facts (torch-free): its params and the checks run before any run exists; serve.py
is its body (its module docstring describes a step)."""

from __future__ import annotations

import os
import re
import socket
from typing import Optional

from pydantic import BaseModel, ConfigDict, Field

from gpuarena.errors import UserError
from gpuarena.store.figures import Count, Figures, Ms, Name, Ranks, Rate, Record, Records, Seconds, Share, Text
from gpuarena.workloads.endpoint import mix, trace
from gpuarena.workloads.endpoint.params import PARAMS, combos, parse_concurrency
from gpuarena.workloads.spec import WorkloadSpec

LOOPBACK = ("localhost", "127.0.0.1", "::1", "0.0.0.0", "ip6-localhost")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


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
    from gpuarena.workloads.endpoint import load  # aiohttp: loaded when a parameter is checked, not to read facts

    host = load.split_url(params["base_url"])[1]
    return host in LOOPBACK or host.startswith("127.") or host == socket.gethostname()


class Spread(BaseModel):
    """Mean and percentiles of a latency in milliseconds (workloads/endpoint/metrics.py spread_ms)."""

    model_config = ConfigDict(extra="allow", strict=True)
    mean: Ms = None
    p50: Ms = None
    p90: Ms = None
    p99: Ms = None


class EndpointFigures(Figures):
    engine: Name = None
    model: Name = None
    api: Name = None
    endpoint: Text = None
    server_local: Optional[bool] = None
    server_gpus: Ranks = None
    served_models: Optional[list[str]] = Field(None, max_length=100)
    rate_requests_per_s: Rate = None
    concurrency: Ranks = None                 # requests in flight (None: no cap)
    warmup: Record = None
    metrics_definition: Text = None
    sweep: Record = None
    # workloads/endpoint/metrics.py summarize
    requests: Count = None
    completed: Count = None
    failed: Count = None
    errors: Optional[dict[str, int]] = None
    duration_s: Seconds = None
    output_tokens: Count = None
    prompt_tokens: Count = None
    tokens_from: Optional[list[str]] = Field(None, max_length=20)
    output_tokens_per_s: Rate = None
    requests_per_s: Rate = None
    total_tokens_per_s: Rate = None
    goodput_requests_per_s: Rate = None
    goodput_tokens_per_s: Rate = None
    slo_attainment: Share = None
    slo_ttft_ms: Ms = None
    slo_tpot_ms: Ms = None
    ttft_ms: Optional[Spread] = None
    tpot_ms: Optional[Spread] = None
    itl_ms: Optional[Spread] = None
    e2e_ms: Optional[Spread] = None
    tokens_per_chunk: Rate = None             # output tokens per text-carrying chunk
    itl_per_token_ms: Optional[Spread] = None  # each chunk gap over its request's tokens per chunk
    send_lag_ms: Optional[Spread] = None       # how late requests were sent after their due time
    passes: Records = None
    requests_stored_with_gaps: Optional[bool] = None
    request_records: Records = None


class EndpointServeSpec(WorkloadSpec):
    name = "endpoint-serve"
    runner = "gpuarena.workloads.endpoint.serve:EndpointServe"
    figures = EndpointFigures
    version = 2     # 2: a sweep point its budget cut is stored unjudged, a sweep no point held is stored (not
    #                 failed); tokens counted per word of a chunk;
    #                 Poisson sends at their due times (no drift)
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
    params = PARAMS
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
        from gpuarena.workloads.endpoint import load

        rate = load.parse_rate(p["rate"])
        p["rate"] = rate if rate == "sweep" else ("inf" if rate == float("inf") else f"{rate:g}")
        base, _ = load.split_url(p["base_url"])
        p["base_url"] = base
        if not ENV_NAME.match(p["api_key_env"]):
            raise UserError(f"api_key_env={p['api_key_env']!r}: the NAME of an environment variable that holds "
                            "the key (the key itself is never a parameter: it would be stored)")
        if p["sweep_max"] < p["sweep_start"]:
            raise UserError(f"sweep_max={p['sweep_max']:g} is below sweep_start={p['sweep_start']:g}")
        p["concurrency"] = parse_concurrency(p["concurrency"])
        combos(p)
        return p

    @classmethod
    def check_params(cls, params: dict) -> None:
        from gpuarena.workloads.endpoint import load

        if params["prompts_file"]:
            load.read_prompts(params["prompts_file"])
        if params["length_dist"] == "dataset":
            mix.read_dataset(params["dataset"])
        if params["trace_file"]:
            trace.read(params["trace_file"], params["trace_time_unit"])

    @classmethod
    def environment(cls, params: dict) -> dict:
        """The server's part of the environment fingerprint (its engine and models)."""
        from gpuarena.workloads.endpoint import client, load

        info = load.probe(params["base_url"], client.headers(os.environ.get(params["api_key_env"])))
        return {"base_url": params["base_url"], "engine": engine_name(params, info),
                "reachable": info["reachable"], "models": info.get("models")}

    @classmethod
    def executed_precision(cls, variants, arch, params=None) -> dict[str, str]:
        return dict.fromkeys(("matmul", "conv", "attention", "elementwise"), "n/a")
