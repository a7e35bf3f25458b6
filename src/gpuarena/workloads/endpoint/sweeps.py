"""endpoint-serve's sweeps: every point kept, inside a time budget.

``rate=sweep`` searches the highest Poisson rate whose SLO attainment holds (metrics.search_rate:
doubling, then bisection); ``concurrency=sweep`` tries 1, 2, 4, ... requests in flight up to
``sweep_max_concurrency`` and stops once a point misses the SLO attainment and raised the output
tokens/s by less than 5 % over the one before (the server is saturated: more users only queue).
Each point is one pass that stops when the server is overloaded (drive.py) and is cut at the
budget's end (``sweep_time_s``); no point starts after it, nor one whose ``duration_s`` would outlast it.
A point the budget cut was not run to its end: it is stored, not judged (``holds`` null), and the
search stops there.  Every point is stored with the figures
a throughput-per-GPU against throughput-per-user frontier reads (output tokens/s, TPOT and TTFT
percentiles, attainment): analysis/verbs/frontier.py draws them.
"""

from __future__ import annotations

import time

from gpuarena.workloads.endpoint import metrics as M

SATURATED = 1.05     # a concurrency point adding less than 5 % output tokens/s over the last adds nothing


class _OutOfTime(Exception):
    pass


def _point(wl, x: float, key: str, n: int, salt: int, t_end: float, **kw) -> dict:
    """Run one sweep point; its figures as stored."""
    p = wl.p
    left = t_end - time.perf_counter()
    if left <= 0 or (p["duration_s"] and left < p["duration_s"]):
        raise _OutOfTime
    recs, dur, stopped = wl._pass(n, salt=salt, sweep=True, deadline_s=left, **kw)
    s = M.summarize(recs, dur, p["slo_ttft_ms"], p["slo_tpot_ms"])
    # over the requests the point sent (a duration_s bound sends fewer than n); failures count as misses; a
    # point stopped for overload does not hold whatever its attainment, one cut by the time limit is not judged
    att = len([r for r in recs if r.meets(p["slo_ttft_ms"], p["slo_tpot_ms"])]) / max(1, len(recs))
    cut = bool(stopped) and stopped.startswith("time limit")
    pt = {key: x, "holds": None if cut else att >= p["slo_attainment"] and not stopped, "slo_attainment": att,
          "sent": len(recs), "failed": s["failed"], "duration_s": dur,
          "output_tokens_per_s": s["output_tokens_per_s"], "requests_per_s": s["requests_per_s"],
          "goodput_requests_per_s": s["goodput_requests_per_s"],
          "tpot_ms": s["tpot_ms"], "ttft_ms": s["ttft_ms"], "itl_ms": s["itl_ms"]}
    if stopped:
        pt["stopped"] = stopped
    wl.sweep.setdefault("points", []).append(pt)
    if cut:
        raise _OutOfTime
    return pt


def _setup(wl, kind: str) -> float:
    p = wl.p
    wl.sweep = {"kind": kind, "target_attainment": p["slo_attainment"], "time_limit_s": p["sweep_time_s"],
                "points": []}
    return time.perf_counter() + p["sweep_time_s"]


def _done(wl, key: str, best, t0: float):
    """The point the timed passes run at: the best that held, else the lightest load tried (the server's
    figures where no load holds the SLO are a finding, stored with every point and said in a warning); a
    RuntimeError only when no point ran at all."""
    wl.sweep["best_" + key] = best
    wl.sweep["elapsed_s"] = time.perf_counter() - t0
    if best is not None:
        return best
    p, pts = wl.p, wl.sweep["points"]
    if not pts:
        raise RuntimeError(f"endpoint-serve: the {key} sweep ran no point inside sweep_time_s={p['sweep_time_s']:g}")
    seen = "; ".join(f"{key} {pt[key]:g}: {pt['slo_attainment']:.0%} within, {pt['failed']} of {pt['sent']} failed"
                     for pt in pts[:4])
    wl.sweep["none_held"] = (f"no {key} held {p['slo_attainment']:.0%} of requests within TTFT {p['slo_ttft_ms']:g} ms "
                             f"and TPOT {p['slo_tpot_ms']:g} ms ({seen}): the timed passes ran at the lightest "
                             f"load tried")
    return min(pt[key] for pt in pts)


def rate(wl) -> float:
    """The highest rate holding the SLO attainment (the timed passes then run at it; none: the lowest tried)."""
    p, t0 = wl.p, time.perf_counter()
    t_end = _setup(wl, "rate")

    def holds(r: float) -> bool:
        return _point(wl, r, "rate", p["num_requests"], 20_000_000 + len(wl.sweep["points"]), t_end,
                      rate=r)["holds"]

    try:
        M.search_rate(holds, p["sweep_start"], p["sweep_max"], p["sweep_refine"])
    except _OutOfTime:
        wl.sweep["cut_by_time_limit"] = True
    held = [pt["rate"] for pt in wl.sweep["points"] if pt["holds"]]
    return _done(wl, "rate", max(held) if held else None, t0)


def concurrency(wl) -> int:
    """The concurrency of the highest output tokens/s holding the SLO attainment (none: the lowest tried)."""
    p, t0 = wl.p, time.perf_counter()
    t_end = _setup(wl, "concurrency")
    c, last = 1, None
    try:
        while c <= p["sweep_max_concurrency"]:
            pt = _point(wl, c, "concurrency", max(p["num_requests"], 2 * c), 30_000_000 + c, t_end,
                        rate=float("inf"), concurrency=c)
            tps = pt["output_tokens_per_s"] or 0.0
            if not pt["holds"] and last is not None and tps < last * SATURATED:
                break
            last = max(tps, last or 0.0)
            c *= 2
    except _OutOfTime:
        wl.sweep["cut_by_time_limit"] = True
    held = [pt for pt in wl.sweep["points"] if pt["holds"]]
    best = max(held, key=lambda pt: pt["output_tokens_per_s"] or 0.0)["concurrency"] if held else None
    return _done(wl, "concurrency", best, t0)
