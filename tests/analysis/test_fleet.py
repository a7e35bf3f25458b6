"""`gpuarena fleet` on generated runs of 16 hosts x 8 GPUs: two planted slow GPUs and one slow link
are flagged, and nothing else; the same fleet read from bundles and from one database; a
half-written fleet is reported as such; and the doctor's verdict rules."""

from __future__ import annotations

import json
import random

from gpuarena.analysis.verbs import doctor as D
from gpuarena.analysis.verbs import fleet as F
from gpuarena.report.text import doctor as doctor_text, fleet as fleet_text
from gpuarena.store import bundle as B
from gpuarena.store.db import Store

HOSTS = [f"node{h:02d}" for h in range(16)]
SLOW_GPUS = {("node03", 5): 0.90, ("node11", 0): 0.93}     # 10% and 7% slow on one check each
SLOW_LINK = ("node07", 0.80)                                # its NVLink all-reduce at 80%
# an H200 copies ~4,240 GB/s (docs/data/h200-2026-11-29.json): a healthy host is within expected
CHECKS = {("matmul", "bf16"): 700.0, ("matmul", "fp16"): 710.0, ("membw", None): 4200.0}


def _result(host: str, device: str, workload: str, dtype, value: float, gpus: int = 1) -> dict:
    params = {"dtype": dtype} if dtype else {"size_mb": 4096 if gpus == 1 else 256}
    extra = {"per_rank": [{"rank": i, "host": host} for i in range(gpus)]} if gpus > 1 else {}
    return {"run_id": f"run-{host}", "case_key": f"{workload}/{dtype}/{device}/{gpus}", "source": "measured",
            "workload": workload, "variant": "seed", "params": params, "size": "full", "gpus": gpus,
            "device": device, "device_name": "NVIDIA H200", "status": "ok", "unit": "TFLOP/s",
            "throughput_median": value, "warnings": [], "extra": extra}


def generate(seed: int = 7, skip_host: str | None = None) -> dict[str, list[dict]]:
    """Per host, its results: every GPU on every check (noise of 0.5%), one all-reduce over 8 GPUs."""
    rnd = random.Random(seed)
    out = {}
    for host in HOSTS:
        rows = []
        for g in range(8):
            for (w, dtype), base in CHECKS.items():
                if host == skip_host and w == "membw":
                    continue
                slow = SLOW_GPUS.get((host, g), 1.0) if (w, dtype) == ("matmul", "bf16") else 1.0
                rows.append(_result(host, f"cuda:{g}", w, dtype, base * slow * rnd.gauss(1, 0.005)))
        link = SLOW_LINK[1] if host == SLOW_LINK[0] else 1.0
        rows.append(_result(host, "cuda", "allreduce", None, 360.0 * link * rnd.gauss(1, 0.005), gpus=8))
        out[host] = rows
    return out


def _flat(per_host):
    from gpuarena.store.rows import validated

    rows, envs = [], {}
    for i, (host, rs) in enumerate(per_host.items()):
        envs[i] = {"hostname": host, "gpus": [{"index": g, "uuid": f"GPU-{host}-{g}"} for g in range(8)]}
        rows += [validated(dict(r, env_id=i)) for r in rs]   # typed, as the store returns them
    return rows, envs


def test_exactly_the_planted_gpus_and_link_are_flagged():
    rows, envs = _flat(generate())
    fleet = F.analyse(rows, envs.get)
    assert fleet.flagged_gpus == ["node03/cuda:5 (GPU-node03-5)", "node11/cuda:0 (GPU-node11-0)"]
    assert fleet.flagged_links == ["node07 x8"]
    assert fleet.hosts == HOSTS and not fleet.incomplete
    bf16 = next(c for c in fleet.cases if c.workload == "matmul" and c.params["dtype"] == "bf16")
    assert bf16.n == 128 and abs(bf16.median / 700 - 1) < 0.01
    text = fleet_text.render(fleet, "table")
    assert "node03/cuda:5" in text and "node07 x8" in text and "flagged: 2 GPU(s), 1 link(s)" in text


def test_statistically_but_not_practically_slow_is_not_flagged():
    figs = {f"g{i}": 100.0 + (i % 2) * 0.01 for i in range(20)}
    figs["g0"] = 98.5          # ~1000 MADs below a quiet fleet, but only 1.5% slower
    assert not any(x["outlier"] for x in F.outliers(figs).values())
    figs["g0"] = 95.0
    assert F.outliers(figs)["g0"]["outlier"]


def test_a_half_written_fleet_is_reported():
    rows, envs = _flat(generate(skip_host="node09"))
    fleet = F.analyse(rows, envs.get)
    (case,) = [c for c, missing in fleet.incomplete.items() if missing == ["node09"]]
    assert case.startswith("NVIDIA H200: membw")
    assert "incomplete: H200: membw size_mb=4096 has no result from node09" in fleet_text.render(fleet, "md")


def test_fleet_from_bundles_and_from_one_database(tmp_path, cli):
    per_host = generate()
    paths = []
    for host in ("node03", "node07", "node01", "node02"):
        s = Store(str(tmp_path / f"{host}.db"))
        env = s.env_id({"hostname": host, "gpus": [{"index": g} for g in range(8)]})
        run = s.create_run("doctor", "cuda", [], env)
        for r in per_host[host]:
            s.add_result(dict(r, run_id=run, env_id=env))
        paths.append(str(tmp_path / f"{host}.json"))
        B.write(B.export(s), paths[-1])
    out = cli("fleet", *paths, "--format", "json")
    assert out.returncode == 1, out.stderr            # a GPU and a link named: exit code 1
    fleet = json.loads(out.stdout)
    assert fleet["flagged_gpus"] == ["node03/cuda:5"] and fleet["flagged_links"] == ["node07 x8"]
    assert [x["unit"] for x in fleet["named"]["gpus"]] == ["node03/cuda:5"]
    assert [x["unit"] for x in fleet["named"]["links"]] == ["node07 x8"]
    merged = str(tmp_path / "merged.db")
    for p in paths:
        assert cli("import", p, "--db", merged).returncode == 0
    healthy = cli("fleet", *[p for p in paths if "node03" not in p and "node07" not in p], "--format", "json")
    assert healthy.returncode == 0 and json.loads(healthy.stdout)["named"]["exit_code"] == 0
    again = json.loads(cli("fleet", "--db", merged, "--format", "json").stdout)
    assert again["flagged_gpus"] == fleet["flagged_gpus"] and again["flagged_links"] == fleet["flagged_links"]
    bad = cli("fleet", str(tmp_path / "nope.json"))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def _check(device, check_value, **over):
    from gpuarena.store.rows import validated

    r = _result("host", device, "matmul", "bf16", check_value)
    r.update(over)
    return validated(r)


def test_doctor_verdicts():
    fp = {"gpus": [{"index": i, "power_limit_w": 700.0} for i in range(4)],
          "gpus_volatile": [{"index": i} for i in range(4)]}
    fp["gpus"][2]["power_limit_w"] = 450.0
    rows = [_check("cuda:0", 700.0), _check("cuda:1", 560.0), _check("cuda:2", 701.0), _check("cuda:3", 699.0),
            _check("cuda:3", 0.0, workload="membw", params={"size_mb": 4096}, status="crashed",
                   throughput_median=None, error="boom")]
    v = D.verdicts(rows, rows, fp)
    got = {g.device: g.verdict for g in v.gpus}
    assert got == {"cuda:0": "OK", "cuda:1": "SLOW", "cuda:2": "CHECK", "cuda:3": "FAIL"}
    assert v.verdict == "FAIL"
    why = {g.device: g.why for g in v.gpus}
    assert "power limit 450 W, below the card's 700 W" in why["cuda:2"]
    assert "0.80x of the host's GPUs" in why["cuda:1"][0]
    assert "cuda:1" in doctor_text.render(v, "table")


def test_the_report_has_a_fleet_section_with_a_chart(tmp_path):
    from gpuarena.report.html import write_report

    s = Store(str(tmp_path / "fleet.db"))
    per_host = generate()
    for host in HOSTS[:6]:
        env = s.env_id({"hostname": host, "gpus": [{"index": g} for g in range(8)]})
        run = s.create_run("doctor", "cuda", [], env)
        for r in per_host[host]:
            s.add_result(dict(r, run_id=run, env_id=env))
    md = open(write_report(s, str(tmp_path / "r.md"), fmt="md"), encoding="utf-8").read()
    assert "### Fleet: each GPU and link against the median" in md
    assert "| H200: matmul dtype=bf16 | node03/cuda:5 |" in md
    html = open(write_report(s, str(tmp_path / "r.html")), encoding="utf-8").read()
    assert "Slowest GPU or link of each case" in html and "<svg" in html


def test_two_gpu_models_are_two_fleets():
    """Four hosts of A100s among sixteen of H200s: slower by design, never outliers."""
    per_host = generate()
    for host in HOSTS[:4]:
        per_host[host] = [dict(r, device_name="NVIDIA A100-SXM4-80GB", throughput_median=r["throughput_median"] / 3)
                          for r in per_host[host]]
    rows, envs = _flat(per_host)
    fleet = F.analyse(rows, envs.get)
    assert fleet.flagged_gpus == ["node03/cuda:5 (GPU-node03-5)", "node11/cuda:0 (GPU-node11-0)"]
    assert fleet.flagged_links == ["node07 x8"]
    assert {c.gpu for c in fleet.cases} == {"NVIDIA H200", "NVIDIA A100-SXM4-80GB"}


def test_machines_that_share_a_hostname_stay_apart(tmp_path, cli):
    """Four containers all called `node` (no GPU UUID in their fingerprints: told apart by the
    environment's content hash), one 10% slow: it is named, tagged so it can be found; a second run
    of one machine (the same GPU UUIDs, another driver) is still one host."""
    s = Store(str(tmp_path / "same.db"))
    slow = None
    for i, factor in enumerate((1.0, 1.0, 0.9, 1.0)):
        env = s.env_id({"hostname": "node", "os": f"image-{i}", "gpus": [{"index": 0}]})
        run = s.create_run("doctor", "cuda", [], env)
        s.add_result(dict(_result("node", "cuda:0", "matmul", "bf16", 700.0 * factor), run_id=run, env_id=env))
        slow = env if factor < 1 else slow
    for driver in ("570", "580"):   # one board measured twice
        env = s.env_id({"hostname": "node", "driver": driver, "gpus": [{"index": 0, "uuid": "GPU-aaaa"}]})
        run = s.create_run("doctor", "cuda", [], env)
        s.add_result(dict(_result("node", "cuda:0", "matmul", "bf16", 700.0), run_id=run, env_id=env))
    out = cli("fleet", "--db", str(tmp_path / "same.db"), "--format", "json")
    fleet = json.loads(out.stdout)
    assert out.returncode == 1, out.stderr
    (case,) = fleet["cases"]
    assert case["n"] == 5 and len(fleet["hosts"]) == 5 and all(h.startswith("node#") for h in fleet["hosts"])
    slow_host = F.host_names({e: s.environment(e) for e in range(1, 7)})[slow]
    assert fleet["flagged_gpus"] == [f"{slow_host}/cuda:0"]
    assert [x["unit"] for x in fleet["named"]["gpus"]] == [f"{slow_host}/cuda:0"]
    table = cli("fleet", "--db", str(tmp_path / "same.db"))
    assert f"{slow_host}/cuda:0" in table.stdout


def test_fleet_markdown_carries_no_html_or_link_from_a_bundle(tmp_path, cli):
    """A hostname is what a bundle says: in `fleet -f md` it is text, never HTML or a link."""
    evil = "<script>x</script>[ok](http://evil.example)"
    s = Store(str(tmp_path / "f.db"))
    for i, factor in enumerate((1.0, 1.0, 0.8, 1.0)):
        host = evil if factor < 1 else f"node{i}"
        env = s.env_id({"hostname": host, "gpus": [{"index": 0}]})
        run = s.create_run("doctor", "cuda", [], env)
        s.add_result(dict(_result(host, "cuda:0", "matmul", "bf16", 700.0 * factor), run_id=run, env_id=env))
    out = cli("fleet", "--db", str(tmp_path / "f.db"), "-f", "md", "--all")
    assert out.returncode == 1, out.stderr
    assert "<script" not in out.stdout and "](" not in out.stdout
    assert "&lt;script&gt;x&lt;/script&gt;[ok]\\(http://evil.example)/cuda:0" in out.stdout
