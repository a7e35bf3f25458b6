"""What endpoint-serve asks: the request mix (lengths, shared prefixes, multi-turn sessions).

A pass is a list of sessions; a session is one or more turns sent one after another, each turn a
user message of some length and the max_tokens it asks for.  A one-turn session is a plain
request.  Every length is in words, one token each for the usual BPE and SentencePiece vocabularies
(WORDS below); the server's ``usage`` says what it counted.

- ``length_dist``: ``fixed`` (every prompt ``prompt_len`` words, every answer ``output_len``
  tokens); ``normal`` or ``lognormal`` with those means and ``length_spread`` as the coefficient
  of variation (standard deviation over mean) of both, rounded and clipped to [1, 8 x the mean];
  ``dataset``: (input, output) pairs drawn with replacement from ``dataset`` (a JSONL file of
  ``{"input_len", "output_len"}`` pairs, of ``{"prompt"}`` texts with an optional
  ``output_len``/``max_tokens``, or of ShareGPT ``{"conversations": [...]}`` whose first human
  turn is the prompt and whose first answer's word count is the output length), by default the
  shipped table data/chat_lengths.jsonl, a synthetic chat-like table whose first line (# ...) states
  how it was drawn: it is not a sample of ShareGPT).
- ``prefix_share`` f with ``prefix_group`` g: requests come in groups of g; the first round(f x L)
  words of each prompt of L words are the group's common text (a system prompt, a RAG document),
  the rest is the request's own.
- ``turns`` T: each session is T turns; turn k sends the conversation so far (every earlier user
  message and the server's actual answers: chat messages, or the texts joined for completions)
  followed by a new user message of a freshly drawn length, after ``think_time_s`` seconds.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path

from gpuarena import safeio
from gpuarena.errors import UserError

# Common English words: the text of a synthetic prompt (load.py's random prompts, a mix's sessions).
WORDS = ("the of and to in is was for on are with as his they be at one have this from or had by "
         "word but what some we can out other were all there when up use your how said an each she "
         "which do their time if will way about many then them write would like so these her long "
         "make thing see him two has look more day could go come did number sound no most people my "
         "over know water than call first who may down side been now find any new work part take get "
         "place made live where after back little only round man year came show every good me give "
         "our under name very through just form sentence great think say help low line differ turn "
         "cause much mean before move right boy old too same tell does set three want air well also "
         "play small end put home read hand port large spell add even land here must big high such").split()

MAX_DATASET_BYTES = 256 << 20
SHIPPED = Path(__file__).resolve().parents[2] / "data" / "chat_lengths.jsonl"
DISTS = ("fixed", "normal", "lognormal", "dataset")
CLIP = 8                          # a drawn length is clipped to CLIP x its mean


@dataclass
class Turn:
    words: int | None             # prompt words to draw (None: ``text`` is given)
    max_tokens: int | None        # None: output_len
    text: object = None           # a given prompt: text, or a list of chat messages
    prefix: tuple | None = None   # (group id, shared words) for a shared prefix


@dataclass
class Session:
    turns: list[Turn]
    at: float | None = None       # seconds from the pass start (a trace's timestamp); None: the arrival process
    hash_ids: list[int] = field(default_factory=list)


def draw(rng: random.Random, dist: str, mean: int, spread: float) -> int:
    """One length of the distribution, rounded and clipped to [1, CLIP x mean]."""
    if dist == "fixed" or spread == 0:
        return mean
    if dist == "normal":
        x = rng.gauss(mean, spread * mean)
    else:   # lognormal of that mean and coefficient of variation
        s2 = math.log(1 + spread * spread)
        x = rng.lognormvariate(math.log(mean) - s2 / 2, math.sqrt(s2))
    return max(1, min(CLIP * mean, round(x)))


def _row(row, where: str) -> dict:
    if not isinstance(row, dict):
        raise UserError(f"{where}: not a JSON object")
    if "input_len" in row:
        n, m = row.get("input_len"), row.get("output_len")
        if not all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 10_000_000 for x in (n, m)):
            raise UserError(f"{where}: input_len and output_len must be positive integers")
        return {"words": n, "max_tokens": m}
    if "conversations" in row:
        conv = row["conversations"]
        texts = [c.get("value") for c in conv if isinstance(c, dict)] if isinstance(conv, list) else []
        if len(texts) < 2 or not all(isinstance(t, str) and t.strip() for t in texts[:2]):
            raise UserError(f"{where}: conversations needs a prompt and an answer with text")
        return {"text": texts[0], "max_tokens": max(1, len(texts[1].split()))}
    prompt = row.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise UserError(f"{where}: needs input_len/output_len, prompt, or conversations")
    mt = row.get("output_len", row.get("max_tokens"))
    if mt is not None and (not isinstance(mt, int) or isinstance(mt, bool) or mt < 1):
        raise UserError(f"{where}: output_len must be a positive integer")
    return {"text": prompt, "max_tokens": mt}


def read_dataset(path: str) -> list[dict]:
    """The rows of a length dataset (see the module doc); a UserError names the first bad line."""
    name = path or str(SHIPPED)
    what = f"dataset {name}"
    text = safeio.read_text(str(Path(name).expanduser()), what, MAX_DATASET_BYTES)
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue      # a line starting with # says where the table comes from
        try:
            row = json.loads(line)
        except ValueError:
            raise UserError(f"{what}, line {i}: not JSON") from None
        out.append(_row(row, f"{what}, line {i}"))
    if not out:
        raise UserError(f"{what}: no rows in it")
    return out


def check(p: dict) -> None:
    """Refuse settings no single parameter's bounds can catch (one line each)."""
    if p["prefix_share"] and p["prefix_group"] < 2:
        raise UserError(f"prefix_share={p['prefix_share']:g} needs prefix_group >= 2 (requests sharing the prefix)")
    if p["length_dist"] in ("normal", "lognormal") and p["length_spread"] == 0:
        raise UserError(f"length_dist={p['length_dist']} needs length_spread > 0 (0 is length_dist=fixed)")
    if p["dataset"] and p["length_dist"] != "dataset":
        raise UserError(f"dataset={p['dataset']!r} is read only with length_dist=dataset")
    if p["think_time_s"] and p["turns"] == 1:
        raise UserError("think_time_s is the pause between turns: it needs turns >= 2")


class Mix:
    """The sessions of a pass, drawn from the parameters with a seeded generator."""

    def __init__(self, p: dict):
        self.p = p
        self.rows = read_dataset(p["dataset"]) if p["length_dist"] == "dataset" else None

    def _turn(self, rng: random.Random, index: int, first: bool) -> Turn:
        p = self.p
        if self.rows:
            row = rng.choice(self.rows)
            turn = Turn(row.get("words"), row["max_tokens"], row.get("text"))
        else:
            turn = Turn(draw(rng, p["length_dist"], p["prompt_len"], p["length_spread"]),
                        draw(rng, p["length_dist"], p["output_len"], p["length_spread"]))
        if first and p["prefix_share"] and turn.words:
            turn.prefix = (index // p["prefix_group"], round(p["prefix_share"] * turn.words))
        return turn

    def sessions(self, n: int, seed: int) -> list[Session]:
        """Sessions holding n requests in all (the last session may have fewer turns)."""
        rng = random.Random(seed)
        turns = self.p["turns"]
        out = []
        for s in range(math.ceil(n / turns)):
            k = min(turns, n - s * turns)
            out.append(Session([self._turn(rng, s, t == 0) for t in range(k)]))
        return out


def _words(seed: str, n: int) -> list[str]:

    rng = random.Random(seed)
    return [rng.choice(WORDS) for _ in range(n)]


def prompt(turn: Turn, key: str, hash_ids: list[int] = (), block: int = 512, seed: int = 0):
    """The prompt of one turn: its given text, or its words: the group's shared prefix (the same
    words for every request of the group), the blocks of its ``hash_ids`` (a block id is the same
    ``block`` words wherever it appears, as in Mooncake traces), then words of its own drawn from
    ``key`` (a string unique to the request)."""
    if turn.text is not None:
        return turn.text
    shared: list[str] = []
    if turn.prefix:
        group, k = turn.prefix
        shared = _words(f"{seed}:prefix:{group}", k)
    for h in hash_ids:
        if len(shared) >= turn.words:
            break
        shared += _words(f"{seed}:block:{h}", block)
    shared = shared[:turn.words]
    return " ".join(shared + _words(key, turn.words - len(shared)))
