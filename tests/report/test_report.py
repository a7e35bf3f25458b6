"""Report generation without a browser: golden Markdown, escaping, the CLI's errors."""

from __future__ import annotations

import os
import re

import pytest

from gpuarena.report.html import write_report
from gpuarena.store.db import Store

from .conftest import RUN_ID, result

GOLDEN = os.path.join(os.path.dirname(__file__), "golden", "report.md")
EVIL = "<script>alert(1)</script>"


def test_markdown_matches_golden(report_db, tmp_path):
    out = write_report(Store(report_db), str(tmp_path / "r.md"), fmt="md")
    text = open(out, encoding="utf-8").read()
    if os.environ.get("UPDATE_GOLDEN"):
        os.makedirs(os.path.dirname(GOLDEN), exist_ok=True)
        with open(GOLDEN, "w", encoding="utf-8") as f:
            f.write(text)
    assert text == open(GOLDEN, encoding="utf-8").read()


def test_markdown_carries_the_html_tables(report_db, tmp_path):
    store = Store(report_db)
    md = open(write_report(store, str(tmp_path / "r.md"), fmt="md"), encoding="utf-8").read()
    html = open(write_report(store, str(tmp_path / "r.html")), encoding="utf-8").read()
    captions = re.findall(r"<caption>(.*?)</caption>", html)
    assert len(captions) >= 10
    for c in captions:
        assert f"**{c}**" in md
    # the measured figures themselves: seed at batch 256 is 256 / median(step seconds)
    assert "| 3 | NVIDIA H200 | seed | batch_size=256 | default | 2,323 |" in md
    assert ("| NVIDIA H200 | 20250101-120000-abcdef | batch_size=256 | amp-bf16+channels-last | 2.55x | 2.54 – 2.57 "
            "| 2.55x faster |") in md


def test_hostile_gpu_name_renders_as_text(report_db, tmp_path):
    store = Store(report_db)
    store.add_result(result("resnet50-train", EVIL, {"batch_size": 64, "image_size": 224},
                            [0.05, 0.051, 0.05], 64, "images/s", source="imported", device_name=EVIL,
                            warnings=[f"note {EVIL}"], error=None))
    html = open(write_report(store, str(tmp_path / "r.html")), encoding="utf-8").read()
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    svg_text = "".join(re.findall(r"<svg.*?</svg>", html, re.S))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg_text   # legend labels inside the charts
    md = open(write_report(store, str(tmp_path / "r.md"), fmt="md"), encoding="utf-8").read()
    assert EVIL not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in md


def test_report_is_self_contained(report_db, tmp_path):
    html = open(write_report(Store(report_db), str(tmp_path / "r.html")), encoding="utf-8").read()
    # nothing is fetched: no remote src or stylesheet (a footnote's <a href> is a link, loaded only on a click)
    assert not re.search(r"""src=["']?(https?:)?//""", html)
    assert not re.search(r"""<link[^>]*href=["']?(https?:)?//""", html)
    assert "@import" not in html and "@media print" in html
    for chart in ("wl-resnet50-train-scaling", "wl-resnet50-train-ladder-chart", "wl-resnet50-train-memory",
                  "telemetry-chart", "scaling-chart", "busbw-chart", "compare-chart"):
        assert re.search(rf'<figure class="chart" id="{chart}"[^>]*>\s*<svg', html), chart


def test_cli_writes_report_and_prints_path(cli, report_db, tmp_path):
    out = tmp_path / "r.html"
    p = cli("report", "--db", report_db, "--run", RUN_ID, "--case", "1", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(out)
    html = out.read_text()
    assert "Telemetry of result 1" in html and "no throttling reported" in html


@pytest.mark.parametrize("args, message", [
    (["--format", "pdf"], "--format 'pdf'"),
    (["--run", "no-such-run"], "no run 'no-such-run'"),
    (["--case", "99999"], "--case 99999"),
    (["--baseline", "B200"], "baseline"),
])
def test_cli_bad_input_is_one_line_and_writes_nothing(cli, report_db, tmp_path, args, message):
    out = tmp_path / "r.html"
    p = cli("report", "--db", report_db, "-o", str(out), *args)
    assert p.returncode == 2
    assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_analysis_sections_carry_the_analyses(report_db, tmp_path):
    """Claims, cost, advice and the whatif model reach the report through gpuarena.analysis."""
    from gpuarena.analysis.verbs.advise import advise

    store = Store(report_db)
    md = open(write_report(store, str(tmp_path / "r.md"), fmt="md"), encoding="utf-8").read()
    # claims: the article's A100 ResNet-50 code runs its convolutions in TF32 (cuDNN's default): 892 images/s
    # x 24.534 GFLOP = 21.9 TFLOP/s = 14% of the TF32 peak, within the best credibly published 17% (MXNet);
    # its BERT FP32 figure runs IEEE FP32 matmuls: above that peak, impossible
    assert ("| A100 40GB SXM4 | resnet50-train | TF32 | 64 | 892.0 | 21.88 | 156.0 | 14% | plausible "
            "| FP32 tensors: TF32 convolutions (cuDNN default), FP32 matmuls |") in md
    assert ("| A100 40GB SXM4 | bert-large-infer | FP32 | 64 | 256.8 | 86.03 | 19.50 | 441% | impossible "
            "| FP32 tensors: IEEE FP32 matmuls (PyTorch's default since 1.12) |") in md
    # cost on the catalog's one default basis (AWS on-demand $/GPU-hour): the H200 at $7.912/h for 2,323 images/s
    # = $0.95 per million images; the A100 80GB at $3.4309/h for 1,434 = $0.66; no purchase price mixed in
    assert ("| resnet50-train | H200 SXM 141GB | seed | batch_size=256 | measured | 2,323 images/s | - | - | $0.95 |"
            in md)
    assert ("| resnet50-train | A100 80GB SXM4 | seed | batch_size=256 | measured | 1,434 images/s | - | - | $0.66 |"
            in md)
    assert "at $0.12/kWh and PUE 1.5" in md
    # advice: advise's fastest and best-per-dollar in two sentences, and the measured H200 row of the ranking
    top = advise(store, "resnet50-train").rows[0]
    assert f"Fastest: the {top.gpu.replace('NVIDIA ', '')}" in md or "Fastest: the B200" in md
    assert "| H200 SXM 141GB | measured | 5,926 | $7.91 | 2,696,326 |" in md
    # whatif beside the measured scaling: 102 MB of FP32 gradients in DDP's 25 MiB buckets, at the busbw
    # interpolated in log(size) between the measured 16 MiB (190 GB/s) and 256 MiB (355 GB/s) points:
    # 190 + 165 x ln(25/16)/ln(16) = 216.6 GB/s; 2 x 1/2 x 102.2 MB / 216.6 GB/s = 0.47 ms against
    # 256 / 2,321 = 110.3 ms of compute -> 99.6%
    assert "| NVIDIA H200 · seed · batch_size=256 model=resnet50 | 2 | 4,448 | 95.8% | 99.6% |" in md
    assert "at 217 GB/s (measured allreduce (4 GPUs) at 25 MiB)" in md


def test_warnings_are_grouped_and_params_briefed():
    from gpuarena.report.model import brief_params
    from gpuarena.report.run_sections import id_ranges

    assert id_ranges([7, 1, 2, 3, 9, 10]) == "1-3, 7, 9-10"
    given = [("w", {"lr": 0.1, "batch_size": 8}), ("w", {"batch_size": 16, "lr": 0.1}),
             ("v", {"dtype": "bf16", "m": 1}), ("v", {"dtype": "fp16", "m": 1})]
    assert brief_params(given) == ["batch_size=8", "batch_size=16", "dtype=bf16", "dtype=fp16"]


def typed(rows: list[dict]) -> list:
    """The rows as the store returns them (typed Results), with ids in order."""
    from gpuarena.store.rows import validated

    return [validated({**r, "id": i}) for i, r in enumerate(rows, 1)]


def test_tuning_ladder_ratios_stay_within_one_run():
    """A variant measured in another run is not set against this run's seed."""
    from gpuarena.report.ladder import tuning_ladder

    p = {"batch_size": 64}
    rows = [result("bert-large-infer", "seed", p, [0.5, 0.5, 0.5], 64, "sequences/s"),
            result("bert-large-infer", "bf16", p, [0.05, 0.05, 0.05], 64, "sequences/s"),
            result("bert-large-infer", "tf32", p, [0.125, 0.125, 0.125], 64, "sequences/s"),
            # another run, measured earlier and imported: only its origin run counts
            result("bert-large-infer", "compile", p, [0.25, 0.25, 0.25], 64, "sequences/s", run_id="imp",
                   extra={"origin_run_id": "20240101-000000-000000"})]
    table, _ = tuning_ladder("bert-large-infer", typed(rows), ["batch_size"])
    got = {row[3]: (row[1], row[4]) for row in table.rows}
    assert got == {"seed": (RUN_ID, "1.00x"), "bf16": (RUN_ID, "10.00x"), "tf32": (RUN_ID, "4.00x")}


def test_tuning_ladder_takes_compile_mode_as_part_of_the_recipe():
    """A compile variant run with another compile_mode is set against the same seed, labelled by
    that mode; a parameter that is not recipe-scoped still makes another setting."""
    from gpuarena.report.ladder import tuning_ladder

    def p(**kw):
        return {"batch_size": 1, "compile_mode": "default", **kw}
    rows = [result("sd15-generate", "seed", p(), [1.6, 1.6, 1.6], 1, "images/s"),
            result("sd15-generate", "compile", p(), [0.8, 0.8, 0.8], 1, "images/s"),
            result("sd15-generate", "compile", p(compile_mode="reduce-overhead"), [0.4, 0.4, 0.4], 1, "images/s"),
            # compile_mode does not act on sdpa: plain "sdpa", against the same seed
            result("sd15-generate", "sdpa", p(compile_mode="reduce-overhead"), [1.28, 1.28, 1.28], 1, "images/s"),
            # batch_size is the setting: a lone row of another setting stays out
            result("sd15-generate", "compile", p(batch_size=2), [0.5, 0.5, 0.5], 2, "images/s")]
    table, chart = tuning_ladder("sd15-generate", typed(rows), ["batch_size", "compile_mode"])
    got = {row[3]: (row[2], row[4]) for row in table.rows}
    assert got == {"seed": ("batch_size=1", "1.00x"), "compile": ("batch_size=1", "2.00x"),
                   "compile (compile_mode=reduce-overhead)": ("batch_size=1", "4.00x"),
                   "sdpa": ("batch_size=1", "1.25x")}
    assert chart.args["categories"][0] == "seed"


def test_ratio_text_keeps_a_real_difference_visible():
    from gpuarena.analysis.rows.common import ratio_text

    assert ratio_text(1.004) == "1.004x"
    assert ratio_text(0.9982) == "0.998x"
    assert ratio_text(1.0) == "1.00x"
    assert ratio_text(1.0001) == "1.00x"
    assert ratio_text(3.129) == "3.13x"
    assert ratio_text(float("nan")) == "-"


def test_only_a_report_that_draws_imports_the_charts(cli, report_db, tmp_path, monkeypatch):
    """The charts module loads matplotlib (0.4 CPU s in each `gpuarena run` process, whose report often
    draws nothing: one matmul, a toy workload): render imports it only for a report with a chart."""
    import json
    import sys

    from gpuarena.report.build import gather
    from gpuarena.report.html import render
    from tests.procs import make_bundle

    (tmp_path / "one.json").write_text(json.dumps(make_bundle(1)))     # one result: nothing to draw
    assert cli("import", str(tmp_path / "one.json"), "--db", str(tmp_path / "one.db")).returncode == 0
    plain, drawn = gather(Store(str(tmp_path / "one.db"))), gather(Store(report_db))
    import gpuarena.report

    monkeypatch.setitem(sys.modules, "gpuarena.report.charts", None)    # importing it now fails
    monkeypatch.delattr(gpuarena.report, "charts", raising=False)
    assert "<svg" not in render(plain) and "<html" in render(plain)
    with pytest.raises(ImportError):
        render(drawn)
