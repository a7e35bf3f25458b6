"""One pass of sessions against the server: when each is sent, what each turn carries, when to stop.

Sessions start at their trace time (``Session.at``) or after the arrival process's gaps, both
as due times from the pass start (a late wake-up delays that one send, never the ones after it),
with the first turn's body built before its due time (before the pass starts for those due at
once), so a long prompt costs no send delay.  A session's turns go one after another, each
carrying the conversation so far (the server's actual answers included) after the think time;
``concurrency`` > 0 caps the requests in flight.  Sending stops at ``duration_s`` (requests in
flight finish), at ``deadline_s`` (everything in flight is cancelled: a sweep's time budget), or
when the server is overloaded: of the last ``WINDOW`` requests to finish, most missed the SLO
while the requests in flight grew (the queue is growing); then requests in flight are cancelled
too.  Cancelled requests are not records: the pass says why it stopped instead.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass

import aiohttp

from gpuarena.workloads.endpoint import client, mix
from gpuarena.workloads.endpoint.metrics import Record

WINDOW = 16      # finished requests the overload rule looks back over


@dataclass
class Plan:
    """How a pass sends (everything but the sessions and their arrival gaps)."""

    url: str
    api: str
    model: str
    hdrs: dict
    output_len: int
    ignore_eos: bool
    concurrency: int = 0
    timeout_s: float = 600.0
    think_time_s: float = 0.0
    duration_s: float = 0.0           # 0: no time bound
    deadline_s: float = 0.0           # 0: none; else cancel everything at this time
    slo: tuple[float, float] | None = None   # (TTFT ms, TPOT ms): stop when overloaded against it
    seed: int = 0
    block: int = 512


def _user(api: str, text):
    """A turn's prompt as chat messages to append, or text to append."""
    if api == "chat":
        return text if isinstance(text, list) else [{"role": "user", "content": text}]
    return text if isinstance(text, str) else " ".join(m["content"] for m in text)


class _Pass:
    def __init__(self, plan: Plan):
        self.plan = plan
        self.records: list[Record] = []
        self.stopped: str | None = None
        self.flying = 0
        self.finished: list[tuple[bool, int]] = []      # (met the SLO, in flight when it finished)
        self.stop = asyncio.Event()
        self.sem = asyncio.Semaphore(plan.concurrency) if plan.concurrency > 0 else None

    def _may_send(self) -> bool:
        d = self.plan.duration_s
        return not self.stop.is_set() and not (d and time.perf_counter() - self.t0 >= d)

    def _watch(self, rec: Record) -> None:
        slo = self.plan.slo
        self.finished.append((rec.meets(*slo) if slo else True, self.flying))
        if slo is None or len(self.finished) <= WINDOW or self.stop.is_set():
            return
        last = self.finished[-WINDOW:]
        missed = sum(not ok for ok, _ in last)
        if missed * 2 > WINDOW and self.flying > self.finished[-WINDOW - 1][1]:
            self.stopped = (f"overloaded after {time.perf_counter() - self.t0:.1f} s: {missed} of the last {WINDOW} "
                            f"requests missed the SLO while the requests in flight grew to {self.flying}")
            self.stop.set()

    async def _one(self, session, body: dict, parts: list) -> Record:
        async def go():
            self.flying += 1
            try:
                return await client.send(session, self.plan.url, self.plan.api, body, self.plan.hdrs,
                                         self.plan.timeout_s, self.t0, parts.append)
            finally:
                self.flying -= 1

        if self.sem is None:
            rec = await go()
        else:
            async with self.sem:
                if not self._may_send():
                    return None
                rec = await go()
        self.records.append(rec)
        self._watch(rec)
        return rec

    def _first(self, s: mix.Session, index: int) -> tuple:
        """The first turn's (prompt, body), built ahead of its send."""
        p = self.plan
        prompt = _user(p.api, mix.prompt(s.turns[0], f"{p.seed}:{index}:0", s.hash_ids, p.block, p.seed))
        return prompt, client.payload(p.api, p.model, prompt, s.turns[0].max_tokens or p.output_len, p.ignore_eos)

    async def session(self, http, s: mix.Session, index: int, first: tuple, due: float) -> None:
        p = self.plan
        history: list | str = [] if p.api == "chat" else ""
        for k, turn in enumerate(s.turns):
            if k and p.think_time_s:
                await asyncio.sleep(p.think_time_s)
            if not self._may_send():
                return
            if k == 0:
                prompt, body = first
            else:
                user = _user(p.api, mix.prompt(turn, f"{p.seed}:{index}:{k}", s.hash_ids, p.block, p.seed))
                prompt = history + user if p.api == "chat" else (f"{history} {user}" if history else user)
                body = client.payload(p.api, p.model, prompt, turn.max_tokens or p.output_len, p.ignore_eos)
            parts: list[str] = []
            rec = await self._one(http, body, parts)
            if rec is not None and k == 0:
                rec.due = due
            if rec is None or not rec.ok:
                return
            answer = "".join(parts)
            history = (prompt + [{"role": "assistant", "content": answer}] if p.api == "chat"
                       else prompt + answer)

    async def run(self, sessions: list[mix.Session], gaps: list[float]) -> float:
        conn = aiohttp.TCPConnector(limit=0, force_close=False)
        async with aiohttp.ClientSession(connector=conn, trust_env=False) as http:
            dues = list(itertools.accumulate(gaps))               # seconds from the pass start
            dues = [s.at if s.at is not None else d for s, d in zip(sessions, dues)]
            # the requests due at once are built before the clock starts (vLLM builds its prompts before
            # its benchmark starts); each later one while the pass waits for it
            ready = {i: self._first(s, i) for i, (s, d) in enumerate(zip(sessions, dues)) if d <= 0}
            self.t0 = time.perf_counter()
            tasks = []
            for i, (s, due) in enumerate(zip(sessions, dues)):
                first = ready.pop(i, None) or self._first(s, i)
                wait = due - (time.perf_counter() - self.t0)
                if wait > 0:
                    try:
                        await asyncio.wait_for(self.stop.wait(), wait)
                    except TimeoutError:
                        pass
                if not self._may_send():
                    break
                tasks.append(asyncio.create_task(self.session(http, s, i, first, due)))
            if tasks:
                await self._finish(tasks)
            return time.perf_counter() - self.t0

    async def _finish(self, tasks: list) -> None:
        """Wait for the sessions; cancel them when the pass stops (overload) or its deadline passes."""
        deadline = self.plan.deadline_s
        pending = set(tasks)
        while pending:
            left = None if not deadline else max(0.0, deadline - (time.perf_counter() - self.t0))
            stop = asyncio.create_task(self.stop.wait())
            done, pending = await asyncio.wait(pending | {stop}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            pending.discard(stop)
            stop.cancel()
            hit_deadline = deadline and time.perf_counter() - self.t0 >= deadline
            if self.stop.is_set() or hit_deadline:
                if hit_deadline and not self.stopped:
                    self.stopped = f"time limit: stopped at {deadline:g} s"
                for t in pending:
                    t.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                return


def run(plan: Plan, sessions: list[mix.Session], gaps: list[float]) -> tuple[list[Record], float, str | None]:
    """(records in send order, seconds from the first send to the last answer, why it stopped early or None)."""
    async def main():
        ps = _Pass(plan)
        dur = await ps.run(sessions, gaps)
        return sorted(ps.records, key=lambda r: r.sent), dur, ps.stopped

    return asyncio.run(main())
