"""endpoint-serve's request mixes, traces, load shapes and sweeps, checked from the server's side:
`gpuarena serve-tiny --record` writes down every request it receives, and a server of known
timing (endpoint_faults /queue: one request at a time, 0.1 s each) overloads on cue."""

from __future__ import annotations

import json
import random
import statistics

import pytest

from gpuarena.errors import UserError
from gpuarena.store.db import Store
from gpuarena.workloads import registry
from gpuarena.workloads.endpoint import load, mix, trace
from tests.workloads import endpoint_faults, tiny_proc
from tests.workloads.conftest import assert_ok, run_entries
from tests.workloads.tiny_proc import in_process

WL = registry.get("endpoint-serve")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(base URL, the JSONL file serve-tiny appends each received request to)."""
    log = tmp_path_factory.mktemp("tiny") / "received.jsonl"
    with tiny_proc.serving(["--record", str(log)]) as url:
        yield url, log


@pytest.fixture
def queue():
    """A fresh server of known timing (no queue left over from another test)."""
    return f"http://127.0.0.1:{endpoint_faults.start()}/queue"


def timed_pass(tiny, **params) -> tuple:
    """One timed pass (no warm-up): (the workload, the requests the server received during it)."""
    url, log = tiny
    before = log.stat().st_size if log.exists() else 0
    wl = in_process({"base_url": url, "warmup_requests": 0, **params})
    wl.step()
    with open(log) as f:
        f.seek(before)
        return wl, [json.loads(x) for x in f]


def expected_sessions(wl) -> list[mix.Session]:
    """The sessions the first timed pass drew (salt 1, as serve.py's step does)."""
    return wl._sessions(wl.p["num_requests"], 1)


def test_length_distributions_hold_their_mean_and_spread():
    for dist in ("normal", "lognormal"):
        rng = random.Random(1)
        xs = [mix.draw(rng, dist, 200, 0.5) for _ in range(20000)]
        assert statistics.fmean(xs) == pytest.approx(200, rel=0.02), dist
        assert statistics.pstdev(xs) / statistics.fmean(xs) == pytest.approx(0.5, abs=0.03), dist
        assert min(xs) >= 1 and max(xs) <= 8 * 200
    assert {mix.draw(random.Random(0), "fixed", 7, 0.5) for _ in range(5)} == {7}
    table = mix.read_dataset("")      # the shipped synthetic table: its stated lognormal means
    assert len(table) == 500
    assert statistics.fmean(r["words"] for r in table) == pytest.approx(220, rel=0.1)
    assert statistics.fmean(r["max_tokens"] for r in table) == pytest.approx(250, rel=0.1)


def test_lognormal_lengths_are_what_the_server_receives(tiny):
    wl, got = timed_pass(tiny, length_dist="lognormal", prompt_len=20, output_len=6, length_spread=0.6,
                         num_requests=12, concurrency=4)
    want = sorted((s.turns[0].words, s.turns[0].max_tokens) for s in expected_sessions(wl))
    assert sorted((r["prompt_tokens"], r["max_tokens"]) for r in got) == want
    assert len({w for w, _ in want}) > 3          # a spread, not one length
    recs = wl.passes[0][0]
    assert sorted((r.prompt_tokens, r.output_tokens) for r in recs) == want


def test_dataset_pairs_prompts_and_sharegpt_rows(tiny, tmp_path):
    data = tmp_path / "lengths.jsonl"
    data.write_text('{"input_len": 5, "output_len": 3}\n# a comment line\n{"input_len": 9, "output_len": 2}\n'
                    '{"prompt": "alpha beta gamma", "output_len": 4}\n'
                    '{"conversations": [{"from": "human", "value": "hi there"}, '
                    '{"from": "gpt", "value": "a b c d e"}]}\n')
    _, got = timed_pass(tiny, length_dist="dataset", dataset=str(data), num_requests=16,
                        concurrency=8)
    pairs = {(r["prompt_tokens"], r["max_tokens"]) for r in got}
    assert pairs <= {(5, 3), (9, 2), (3, 4), (2, 5)} and len(pairs) >= 3
    assert {r["prompt"] for r in got if r["prompt_tokens"] == 3} <= {"alpha beta gamma"}


def test_prefix_share_is_shared_within_each_group_only(tiny):
    wl, got = timed_pass(tiny, prompt_len=20, prefix_share=0.5, prefix_group=4, num_requests=8, concurrency=8)
    prompts = [r["prompt"].split() for r in got]
    assert len(prompts) == 8 and all(len(p) == 20 for p in prompts)
    groups: dict[tuple, list] = {}
    for p in prompts:
        groups.setdefault(tuple(p[:10]), []).append(p)
    assert sorted(len(g) for g in groups.values()) == [4, 4]        # two groups of four share 10 of 20 words
    for g in groups.values():
        assert len({tuple(p[10:]) for p in g}) == 4                  # the rest is each request's own
    a, b = groups
    assert a[0] != b[0]
    plain = timed_pass(tiny, prompt_len=20, num_requests=8, concurrency=8)[1]
    assert len({r["prompt"].split()[0] for r in plain}) > 1 or len({r["prompt"] for r in plain}) == 8


def test_turns_carry_the_conversation_and_wait_the_think_time(tiny):
    wl, got = timed_pass(tiny, api="chat", turns=3, think_time_s=0.3, prompt_len=5, output_len=4, num_requests=6)
    by_len = sorted(got, key=lambda r: len(r["roles"]))
    assert [r["roles"] for r in by_len] == [["user"]] * 2 + [["user", "assistant", "user"]] * 2 + [
        ["user", "assistant", "user", "assistant", "user"]] * 2
    # each turn sends the conversation so far: 5 words, + the 4-token answer and 5 new words, ...
    assert sorted(r["prompt_tokens"] for r in got) == [5, 5, 14, 14, 23, 23]
    for first in by_len[:2]:
        second = next(r for r in by_len[2:4] if r["prompt"].startswith(first["prompt"]))
        third = next(r for r in by_len[4:] if r["prompt"].startswith(second["prompt"]))
        assert second["t"] - first["t"] >= 0.3 and third["t"] - second["t"] >= 0.3
        answer = second["prompt"][len(first["prompt"]):].split()[:4]
        assert all(w.startswith("t") for w in answer)                 # the server's own answer, carried
    completions = timed_pass(tiny, turns=2, prompt_len=5, output_len=4, num_requests=2)[1]
    assert sorted(r["prompt_tokens"] for r in completions) == [5, 14]


def test_trace_replayed_at_its_own_times(tiny, tmp_path):
    times_ms = [0, 150, 200, 600, 650]
    lines = [{"timestamp": t, "input_length": 6, "output_length": 2} for t in times_ms]
    lines[1].update(input_length=8, hash_ids=[7, 8])
    lines[3].update(input_length=8, hash_ids=[7, 8, 9])
    f = tmp_path / "trace.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    wl, got = timed_pass(tiny, trace_file=str(f), trace_time_unit="ms", trace_block=3, num_requests=5)
    assert len(got) == 5 and [r["prompt_tokens"] for r in got] == [6, 8, 6, 8, 6]
    # the client's own send stamps: each request within 20 ms of its time (test_endpoint_timing.py holds this
    # under load, over several passes); the server's clock, which a busy machine delays too, more loosely
    sent = [r.sent for r in wl.passes[0][0]]
    assert all(abs((s - sent[0]) - t / 1e3) <= 0.020 for s, t in zip(sent, times_ms)), sent
    t0 = got[0]["t"]
    for r, t in zip(got, times_ms):
        assert abs((r["t"] - t0) - t / 1e3) <= 0.100, (r["t"] - t0, t)
    # hash ids 7 and 8 stand for the same two blocks of 3 words: 6 shared words, then the requests differ
    a, b = got[1]["prompt"].split(), got[3]["prompt"].split()
    assert a[:6] == b[:6] and len(a) == len(b) == 8


def test_malformed_trace_line_is_refused_with_its_number(tmp_path, cli, db_path):
    f = tmp_path / "trace.jsonl"
    f.write_text('{"timestamp": 0, "input_length": 4, "output_length": 2}\n\n'
                 '{"timestamp": "soon", "input_length": 4, "output_length": 2}\n')
    with pytest.raises(UserError, match=r"trace\.jsonl, line 3: timestamp must be a number"):
        trace.read(str(f))
    for body, words in [('{"timestamp": 1, "input_length": 0, "output_length": 2}', "line 1: input_length"),
                        ('{"timestamp": 1, "input_length": 3, "output_length": 2, "hash_ids": [-1]}',
                         "line 1: hash_ids"), ("[1, 2]", "line 1: not a JSON object"), ("{", "line 1: not JSON")]:
        f.write_text(body + "\n")
        with pytest.raises(UserError, match=words):
            trace.read(str(f))
    out = cli("run", "-w", "endpoint-serve", "--set", f"trace_file={f}", "--db", db_path)
    assert out.returncode == 2 and "line 1: not JSON" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


BAD = [({"length_dist": "zipf"}, "must be one of fixed, normal, lognormal, dataset"),
       ({"length_dist": "normal", "length_spread": 0}, "needs length_spread > 0"),
       ({"length_spread": -1}, "length_spread=-1.0: must be >= 0"),
       ({"dataset": "x.jsonl"}, "only with length_dist=dataset"),
       ({"prefix_share": 1.5}, "prefix_share=1.5: must be <= 1"),
       ({"prefix_share": 0.5, "prefix_group": 1}, "needs prefix_group >= 2"),
       ({"turns": 0}, "turns=0: must be >= 1"),
       ({"think_time_s": 2}, "needs turns >= 2"),
       ({"trace_file": "t.jsonl", "rate": 3}, "does not combine with rate"),
       ({"trace_file": "t.jsonl", "turns": 2}, "does not combine with turns"),
       ({"trace_time_unit": "h"}, "must be one of s, ms"),
       ({"load_shape": "ramp"}, "needs a rate in requests/s"),
       ({"load_shape": "bursts", "rate": "sweep"}, "needs a rate in requests/s"),
       ({"load_shape": "ramp", "rate": 2, "ramp_start_rate": 4}, "must be below rate=2"),
       ({"burst_size": 0}, "burst_size=0: must be >= 1"),
       ({"duration_s": -1}, "duration_s=-1.0: must be >= 0"),
       ({"concurrency": "lots"}, "concurrency='lots': expected"),
       ({"concurrency": -3}, "between 0 and 100000"),
       ({"concurrency": "sweep", "rate": "sweep"}, "sweep one of them"),
       ({"sweep_time_s": 0}, "sweep_time_s=0.0: must be >= 1"),
       ({"prompts_file": "p.jsonl", "length_dist": "lognormal"}, "does not combine with length_dist")]


@pytest.mark.parametrize("given,words", BAD, ids=[w for _, w in BAD])
def test_every_new_parameter_refuses_bad_input(given, words):
    with pytest.raises(UserError, match=words.replace("(", r"\(").replace("[", r"\[")):
        WL.resolve_params(given)


def test_bad_input_from_the_cli_is_one_line_and_exit_2(cli, db_path, tmp_path):
    for args in (["length_dist=zipf"], ["load_shape=ramp"], ["concurrency=sweep", "rate=sweep"],
                 ["length_dist=dataset", f"dataset={tmp_path / 'none.jsonl'}"]):
        sets = [x for a in args for x in ("--set", a)]
        out = cli("run", "-w", "endpoint-serve", *sets, "--db", db_path)
        assert out.returncode == 2, (args, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_load_shapes():
    assert load.waits(10, 8.0, 0, "bursts", burst=4) == [0, 0, 0, 0, 0.5, 0, 0, 0, 0.5, 0]
    w = load.waits(8000, 100.0, 3, "ramp", ramp_start=10.0)
    assert w[0] == 0.0
    def mean_gap(idx):   # the mean of 1 / (the rate at request i), the rate rising linearly 10 -> 100
        return statistics.fmean(1 / (10 + 90 * i / 7999) for i in idx)

    assert statistics.fmean(w[1:400]) == pytest.approx(mean_gap(range(1, 400)), rel=0.1)
    assert statistics.fmean(w[-400:]) == pytest.approx(mean_gap(range(7600, 8000)), rel=0.1)
    steady = load.waits(4000, 20.0, 1)
    assert steady[0] == 0.0 and statistics.fmean(steady[1:]) == pytest.approx(1 / 20, rel=0.06)


def test_duration_bounds_a_pass(tiny):
    wl, got = timed_pass(tiny, rate=20, num_requests=200, duration_s=0.5, prompt_len=4, output_len=2)
    recs = wl.passes[0][0]
    assert 0 < len(recs) == len(got) < 200 and all(r.sent <= 0.5 + 0.02 for r in recs)


def test_overloaded_server_stops_the_pass(queue):
    # 30 requests/s at a server that answers 10/s: the queue grows and TTFT passes 50 ms
    wl = in_process({"base_url": queue, "warmup_requests": 0, "rate": 30, "num_requests": 200,
                     "stop_overloaded": True, "slo_ttft_ms": 50})
    wl.step()
    (recs, dur), = wl.passes
    assert wl.stopped and "overloaded" in wl.stopped[0] and len(recs) < 100
    assert any("overloaded" in w for w in wl.extra()["stopped"])
    assert any(w.startswith("stopped early, pass 1: overloaded after") for w in wl.check())


def test_concurrency_sweep_stores_every_point_through_the_store(queue, db_path):
    # one request at a time, 0.5 s each: concurrency 1 holds TTFT 750 ms (250 ms of margin for a busy
    # machine's delays), 2 queues half of them past it (~1 s) and adds no throughput, so the sweep ends
    # there and runs its passes at 1
    (r,) = run_entries(db_path, [{"workload": "endpoint-serve", "params": {
        "base_url": queue.replace("/queue", "/slowqueue"), "concurrency": "sweep", "slo_ttft_ms": 750,
        "num_requests": 6,
        "warmup_requests": 0}}], repeats=1)
    assert_ok(r)
    (stored,) = Store(db_path).results()
    sweep = stored.extra.sweep
    assert [p["concurrency"] for p in sweep["points"]] == [1, 2]
    assert [p["holds"] for p in sweep["points"]] == [True, False] and sweep["best_concurrency"] == 1
    assert stored.extra.concurrency == 1 and stored.params["concurrency"] == "sweep"
    assert all(p["output_tokens_per_s"] > 0 and p["ttft_ms"]["p50"] > 0 for p in sweep["points"])


def test_sweep_stops_at_its_time_limit(queue):
    # concurrency 1 takes 2 s for its 20 requests and holds; concurrency 2 is cut at the 3 s budget
    wl = in_process({"base_url": queue, "concurrency": "sweep", "slo_ttft_ms": 1e6,
                     "num_requests": 20, "warmup_requests": 0, "sweep_time_s": 3})
    assert wl.sweep["cut_by_time_limit"] and wl.sweep["elapsed_s"] < 3.5 and wl.concurrency == 1
    assert [p["concurrency"] for p in wl.sweep["points"]] == [1, 2]
    # the cut point is kept but not judged: it did not run to its end
    assert "time limit" in wl.sweep["points"][-1]["stopped"] and wl.sweep["points"][-1]["holds"] is None


def test_a_sweep_starts_no_point_its_budget_cannot_finish(queue):
    # points of 2 s in a 3 s budget: the first runs whole (a second of margin for a busy machine), a second
    # would outlast the budget and is not started
    wl = in_process({"base_url": queue, "concurrency": "sweep", "sweep_max_concurrency": 8, "num_requests": 256,
                     "duration_s": 2, "slo_ttft_ms": 1e6, "warmup_requests": 0, "sweep_time_s": 3})
    pts = wl.sweep["points"]
    assert [p["concurrency"] for p in pts] == [1] and pts[0]["holds"] and wl.concurrency == 1
    assert wl.sweep["cut_by_time_limit"] and not any("stopped" in p for p in pts)


def test_rate_sweep_keeps_every_point_inside_its_time_limit(queue):
    # 4 requests a point from 2 requests/s, doubling to 64: about 4 s of points at 10 requests/s at most,
    # so the 3 s budget cuts the sweep; every point run so far is kept and the best that held is used
    wl = in_process({"base_url": queue, "rate": "sweep", "sweep_start": 2, "sweep_max": 64, "num_requests": 4,
                     "slo_ttft_ms": 1e6, "warmup_requests": 0, "sweep_time_s": 3})
    pts = wl.sweep["points"]
    assert wl.sweep["cut_by_time_limit"] and wl.sweep["elapsed_s"] < 3.5
    assert [p["rate"] for p in pts] == [2 * 2 ** i for i in range(len(pts))] and len(pts) >= 2
    assert wl.rate == max(p["rate"] for p in pts if p["holds"]) and wl.sweep["best_rate"] == wl.rate


def test_time_bounded_sweep_points_judge_the_requests_they_sent(queue):
    # each point stops sending after 1 s: its attainment is over the ~10 requests sent, not num_requests
    wl = in_process({"base_url": queue, "concurrency": "sweep", "sweep_max_concurrency": 2, "num_requests": 256,
                     "duration_s": 1, "slo_ttft_ms": 1e6, "warmup_requests": 0})
    (one, two) = wl.sweep["points"]
    assert 5 <= one["sent"] < 256 and one["slo_attainment"] == 1.0 and one["holds"] and two["holds"]
    assert wl.concurrency in (1, 2)


def test_a_trace_warms_up_without_waiting_for_its_times(tiny, tmp_path):
    f = tmp_path / "late.jsonl"
    f.write_text('{"timestamp": 0.2, "input_length": 4, "output_length": 2}\n'
                 '{"timestamp": 30, "input_length": 4, "output_length": 2}\n')
    url, _ = tiny
    wl = in_process({"base_url": url, "trace_file": str(f), "warmup_requests": 2, "num_requests": 1})
    assert wl.warm["requests"] == 2 and wl.warm["duration_s"] < 10      # not the trace's 30 s
