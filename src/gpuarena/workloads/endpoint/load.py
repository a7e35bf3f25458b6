"""What is sent and when: the prompts, the arrival process, one pass of requests, the engine probe.

Prompts of a fixed length are random common English words, one token each in the usual BPE and
SentencePiece vocabularies (a word after a space is one piece), drawn per request from a seeded
generator so that no two prompts share a prefix a server could cache; the server's ``usage``
says how many tokens it saw.  A user's JSONL file gives one request per line instead.

Arrivals follow vLLM's serving benchmark: at rate ``inf`` every request is sent at once, else
the gaps between sends are exponential (a Poisson process) of mean 1/rate; ``concurrency`` > 0
caps the requests in flight (vLLM's ``--max-concurrency``), which with rate ``inf`` is a fixed
concurrency.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp

from gpuarena.errors import UserError
from gpuarena.redact import has_secret, redact
from gpuarena.safeio import printable, read_text
from gpuarena.workloads.endpoint import client
from gpuarena.workloads.endpoint.metrics import Record
from gpuarena.workloads.endpoint.mix import WORDS

MAX_PROMPTS_BYTES = 256 << 20      # a prompts file larger than this is refused, not read


def random_prompts(n: int, length: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(length)) for _ in range(n)]


def read_prompts(path: str) -> list[dict]:
    """A JSONL file: one object per line with "prompt" (text) or "messages" (chat), and
    optionally "max_tokens" (else output_len).  A UserError names the first bad line."""
    # the one safe reader: a FIFO, a device (/dev/zero) or a file past the cap is one line, never a hang
    lines = read_text(str(Path(path).expanduser()), f"prompts_file {path}", MAX_PROMPTS_BYTES).splitlines()
    out = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise UserError(f"prompts_file {path}, line {i}: not JSON") from None
        if not isinstance(row, dict):
            raise UserError(f"prompts_file {path}, line {i}: not a JSON object")
        prompt = row.get("prompt", row.get("messages"))
        ok = isinstance(prompt, str) or (isinstance(prompt, list) and prompt and all(
            isinstance(m, dict) and isinstance(m.get("content"), str) for m in prompt))
        if not ok:
            raise UserError(f"prompts_file {path}, line {i}: needs \"prompt\" (text) or \"messages\" "
                            "(a list of {\"role\", \"content\"})")
        mt = row.get("max_tokens", row.get("output_len"))
        if mt is not None and (not isinstance(mt, int) or isinstance(mt, bool) or mt < 1):
            raise UserError(f"prompts_file {path}, line {i}: max_tokens must be a positive integer")
        out.append({"prompt": prompt, "max_tokens": mt})
    if not out:
        raise UserError(f"prompts_file {path}: no prompts in it")
    return out


def parse_rate(raw: str) -> float | str:
    """'inf', 'sweep' or a positive number of requests per second."""
    text = str(raw).strip().lower()
    if text in ("inf", "sweep"):
        return float("inf") if text == "inf" else "sweep"
    try:
        rate = float(text)
    except ValueError:
        raise UserError(f"rate={raw!r}: expected requests per second, 'inf' or 'sweep'") from None
    if not (rate > 0 and rate != float("inf")):
        raise UserError(f"rate={raw!r}: must be a positive number of requests per second")
    return rate


def gaps(n: int, rate: float, seed: int) -> list[float]:
    """Seconds to wait after each send: 0 at rate inf, else exponential of mean 1/rate."""
    if rate == float("inf"):
        return [0.0] * n
    rng = random.Random(seed)
    return [rng.expovariate(rate) for _ in range(n)]



def waits(n: int, rate: float, seed: int, shape: str = "steady", ramp_start: float = 1.0,
          burst: int = 8) -> list[float]:
    """Seconds to wait before each of n sends.  steady: Poisson at ``rate`` (0 at rate inf);
    ramp: Poisson whose rate rises linearly with the request's index from ``ramp_start`` to
    ``rate`` (vLLM's --ramp-up-strategy linear); bursts: ``burst`` requests at once, the bursts
    ``burst / rate`` seconds apart (the same mean rate, all of it in spikes)."""
    if shape == "bursts":
        return [burst / rate if i and i % burst == 0 else 0.0 for i in range(n)]
    if shape == "ramp":
        rng = random.Random(seed)
        step = (rate - ramp_start) / max(1, n - 1)
        return [0.0] + [rng.expovariate(ramp_start + step * i) for i in range(1, n)]
    return [0.0] + gaps(n, rate, seed)[:-1] if n else []


async def _pass(url: str, api: str, bodies: list[dict], hdrs: dict, rate: float, concurrency: int,
                timeout_s: float, seed: int) -> tuple[list[Record], float]:
    sem = asyncio.Semaphore(concurrency) if concurrency > 0 else None
    conn = aiohttp.TCPConnector(limit=0, force_close=False)
    async with aiohttp.ClientSession(connector=conn, trust_env=False) as session:
        t0 = time.perf_counter()

        async def one(body):
            if sem is None:
                return await client.send(session, url, api, body, hdrs, timeout_s, t0)
            async with sem:
                return await client.send(session, url, api, body, hdrs, timeout_s, t0)

        tasks = []
        due = 0.0
        for body, gap in zip(bodies, gaps(len(bodies), rate, seed)):
            tasks.append(asyncio.create_task(one(body)))
            due += gap       # due times from the start: a late wake-up does not delay every later send
            if (wait := due - (time.perf_counter() - t0)) > 0:
                await asyncio.sleep(wait)
        records = await asyncio.gather(*tasks)
        return list(records), time.perf_counter() - t0


def run_pass(url: str, api: str, bodies: list[dict], hdrs: dict, rate: float, concurrency: int,
             timeout_s: float, seed: int) -> tuple[list[Record], float]:
    """Send every body at the given rate; (records in send order, seconds from first send to last answer)."""
    return asyncio.run(_pass(url, api, bodies, hdrs, rate, concurrency, timeout_s, seed))


async def _probe(base: str, hdrs: dict) -> dict:
    async with aiohttp.ClientSession(trust_env=False) as session:
        why: list[str] = []
        version = await client.get_json(session, base + "/version", hdrs, why=why)
        models = await client.get_json(session, base + "/v1/models", hdrs, why=why)
    out: dict = {"reachable": version is not None or models is not None}
    if why and not out["reachable"]:
        out["why"] = why[0]
    if isinstance(version, dict) and isinstance(version.get("version"), str):
        out["version"] = _said(version["version"], 60)
    data = models.get("data") if isinstance(models, dict) else None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        out["models"] = [_said(m.get("id"), 200) for m in data[:20] if isinstance(m, dict)]
        owner = data[0].get("owned_by")
        if isinstance(owner, str) and _said(owner, 60):
            out["owned_by"] = _said(owner, 60)
    return out


def _said(text, most: int) -> str:
    """What a server says about itself, as stored: one printable line (a control character would make
    the measured result unstorable, and reach the terminal), bounded."""
    return " ".join(printable(str(text)).split())[:most]


def probe(base: str, hdrs: dict) -> dict:
    """What the server says about itself: {"reachable", "version"?, "models"?, "owned_by"?}."""
    return asyncio.run(_probe(base, hdrs))


def split_url(base: str) -> tuple[str, str]:
    """(scheme://host:port/prefix without a trailing slash, host); UserError when it is no http URL,
    or carries what must not be stored with every result (a user name or password, a query)."""
    text = str(base).strip()
    shown = redact(text)[:200]
    try:
        u = urlsplit(text)
        host, _ = u.hostname, u.port     # an unbalanced [ or a port that is no number raise here
    except ValueError as exc:
        raise UserError(f"base_url={shown!r}: not a valid URL ({exc})") from None
    if u.scheme.lower() not in ("http", "https") or not host:
        raise UserError(f"base_url={shown!r}: expected http://HOST:PORT (the server's address, "
                        "without /v1/completions)")
    if "@" in u.netloc or has_secret(text):
        raise UserError(f"base_url={shown!r}: a user name or password in base_url would be stored and shown "
                        "with every result; put the key in an environment variable and name it with "
                        "api_key_env=NAME (it is sent as a Bearer token and never stored)")
    if u.query or u.fragment:
        raise UserError(f"base_url={shown!r}: the server's address takes no ?query or #fragment")
    path = u.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[:-3]
    return f"{u.scheme.lower()}://{u.netloc}{path}", host
