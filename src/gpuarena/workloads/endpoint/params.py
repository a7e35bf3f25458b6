"""endpoint-serve's parameters, each documented with its default where it is declared, and the
checks between them (one UserError line each); serve.py runs them, mix.py, trace.py, load.py and
drive.py say what each does."""

from __future__ import annotations

from gpuarena.errors import UserError
from gpuarena.workloads.param import Param
from gpuarena.workloads.endpoint import mix

LOAD_SHAPES = ("steady", "ramp", "bursts")   # how requests are spread in time (load.py waits)

PARAMS = (
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
        Param("concurrency", str, 0, "most requests in flight (0: no cap); with rate=inf a fixed concurrency; "
              "sweep: 1, 2, 4, ... up to sweep_max_concurrency, every point stored, the timed passes at the "
              "busiest one holding the SLO attainment"),
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
        # --- the request mix (mix.py) and the load's shape (load.py waits, drive.py) ---
        Param("length_dist", str, "fixed", "prompt and output lengths: fixed, normal or lognormal (means prompt_len "
              "and output_len, spread length_spread) or dataset (pairs drawn from the dataset file)",
              choices=mix.DISTS),
        Param("length_spread", float, 0.5, "coefficient of variation (std / mean) of normal and lognormal lengths",
              min=0.0, max=4.0),
        Param("dataset", str, "", "length_dist=dataset: a JSONL file of {input_len, output_len}, {prompt} or "
              "ShareGPT {conversations}; empty: the shipped synthetic chat table data/chat_lengths.jsonl"),
        Param("prefix_share", float, 0.0, "share of each prompt that is a prefix common to its group (a system "
              "prompt, a RAG document); 0: no two prompts share a prefix", min=0.0, max=1.0),
        Param("prefix_group", int, 8, "requests per group sharing a prefix (prefix_share > 0)", min=1, max=1_000_000),
        Param("turns", int, 1, "turns per session: each turn sends the conversation so far (the server's answers "
              "included) and a new user message", min=1, max=1000),
        Param("think_time_s", float, 0.0, "seconds between a turn's answer and the next turn", min=0.0, max=3600.0),
        Param("trace_file", str, "", "a JSONL trace (timestamp, input_length, output_length, optional hash_ids) "
              "replayed at its own times, at most num_requests lines a pass; replaces rate and the length mix"),
        Param("trace_time_unit", str, "s", "unit of the trace's timestamps: s, or ms (Mooncake traces)",
              choices=("s", "ms")),
        Param("trace_block", int, 512, "tokens per hash_ids block of the trace (Mooncake: 512)", min=1,
              max=1_000_000),
        Param("load_shape", str, "steady", "arrivals: steady (Poisson at rate), ramp (Poisson rising from "
              "ramp_start_rate to rate) or bursts (burst_size requests at once, same mean rate)",
              choices=LOAD_SHAPES),
        Param("ramp_start_rate", float, 1.0, "load_shape=ramp: the rate of the first request (requests/s)",
              min=1e-3, max=1e6),
        Param("burst_size", int, 8, "load_shape=bursts: requests sent at once", min=1, max=1_000_000),
        Param("duration_s", float, 0.0, "stop sending after this many seconds of a pass (requests in flight "
              "finish); 0: send num_requests, which still caps a time-bounded pass", min=0.0, max=86400.0),
        Param("stop_overloaded", bool, False, "end a timed pass when the server is overloaded (of the last 16 "
              "requests most missed the SLO while the requests in flight grew); sweeps always do"),
        Param("sweep_time_s", float, 300.0, "time budget of a sweep (rate or concurrency): no point starts after "
              "it and the one running is cut at it", tiny=120.0, min=1.0, max=86400.0),
        Param("sweep_max_concurrency", int, 256, "highest concurrency a concurrency sweep tries", tiny=8,
              min=1, max=100_000),
)


def parse_concurrency(raw) -> int | str:
    """'sweep' or a whole number of requests in flight (0: no cap)."""
    text = str(raw).strip().lower()
    if text == "sweep":
        return text
    try:
        n = int(text)
    except ValueError:
        raise UserError(f"concurrency={raw!r}: expected requests in flight (0: no cap) or 'sweep'") from None
    if not 0 <= n <= 100_000:
        raise UserError(f"concurrency={raw!r}: must be between 0 and 100000")
    return n


def combos(p: dict) -> None:
    """Refuse parameters that contradict each other, one line each."""
    mix.check(p)
    if p["rate"] == "sweep" and p["concurrency"] == "sweep":
        raise UserError("rate=sweep and concurrency=sweep: sweep one of them")
    if p["trace_file"]:
        clash = [k for k, default in (("prompts_file", ""), ("length_dist", "fixed"), ("prefix_share", 0.0),
                                      ("turns", 1), ("load_shape", "steady")) if p[k] != default]
        if p["rate"] != "inf" or p["concurrency"] == "sweep":
            clash.append("rate" if p["rate"] != "inf" else "concurrency")
        if clash:
            raise UserError(f"trace_file gives the requests' times and lengths: it does not combine with {clash[0]}")
    if p["prompts_file"] and (p["length_dist"] != "fixed" or p["prefix_share"]):
        raise UserError("prompts_file gives the prompts: it does not combine with length_dist or prefix_share")
    if p["load_shape"] != "steady":
        if p["rate"] in ("inf", "sweep"):
            raise UserError(f"load_shape={p['load_shape']} needs a rate in requests/s (not {p['rate']})")
        if p["load_shape"] == "ramp" and p["ramp_start_rate"] >= float(p["rate"]):
            raise UserError(f"ramp_start_rate={p['ramp_start_rate']:g} must be below rate={p['rate']}")
