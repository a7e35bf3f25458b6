"""The report in a real browser: headless Chromium renders it, the screenshot is not blank,
and the DOM it builds holds the tables and every chart."""

from __future__ import annotations

import json
import os
import re
import subprocess
from html import unescape

import pytest

from gpuarena.analysis.rows.published import load_into
from gpuarena.report.html import write_report
from gpuarena.store.bundle import import_bundle
from gpuarena.store.db import Store

CHROMIUM = "/usr/bin/chromium"
BUNDLES = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "data")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CHARTS = ("wl-resnet50-train-scaling", "wl-resnet50-train-ladder-chart", "wl-resnet50-train-memory",
          "telemetry-chart", "scaling-chart", "busbw-chart", "compare-chart")
TABLES = ("runs", "method", "environments", "hardware-table", "compare-table", "wl-resnet50-train-throughput",
          "wl-resnet50-train-ladder", "telemetry-table", "scaling-table", "busbw-table", "claims-table",
          "cost-table", "advice-resnet50-train-table", "warnings-table", "wl-sd15-generate-throughput")


@pytest.fixture
def chromium():
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: the test set-up runs scripts/install_chromium.sh")
        pytest.skip(f"{CHROMIUM} is not installed (scripts/install_chromium.sh installs it)")
    return CHROMIUM


def browse(chromium: str, tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=600)   # a hang guard, not a speed limit


def test_report_renders_in_chromium(chromium, report_db, tmp_path):
    from PIL import Image

    page = write_report(Store(report_db), str(tmp_path / "report.html"))
    url = "file://" + os.path.abspath(page)
    shot = tmp_path / "shot.png"
    p = browse(chromium, tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", url)
    assert shot.exists(), p.stderr[-2000:]
    img = Image.open(shot).convert("RGB")
    assert img.size == (1280, 2000)
    colours = img.getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 50                                   # text, tiles, table stripes, chart lines
    assert max(c for c, _ in colours) < 0.97 * img.size[0] * img.size[1]   # not one flat colour
    dom = browse(chromium, tmp_path, "--dump-dom", url).stdout
    for table in TABLES:
        assert re.search(rf'<table id="{table}"', dom), table
    for chart in CHARTS:
        m = re.search(rf'<figure class="chart" id="{chart}".*?</figure>', dom, re.S)
        assert m, chart
        assert "<svg" in m.group(0) and "<path" in m.group(0), chart   # drawn, not an empty frame
    assert "2,323" in dom and "2.55x faster" in dom
    rows = lambda table: re.search(rf'<table id="{table}".*?</table>', dom, re.S).group(0).count("<tr>") - 1  # noqa: E731
    # one row per claim in data/article_claims.csv
    assert rows("claims-table") == 20 and rows("cost-table") == 5 and rows("advice-resnet50-train-table") == 5
    # SD v1.5 in the article's unit: seconds per image in its tile, table and cost rows; the search's batch
    sd = re.search(r'<table id="wl-sd15-generate-throughput".*?</table>', dom, re.S).group(0)
    assert "median s/image" in sd and "1.59" in sd and "&gt;= 256 (the cap)" in sd
    answer = re.search(r'<table id="answer-table".*?</table>', dom, re.S).group(0)
    assert ">sd15-generate<" in answer and "0.418 s/image" in answer   # the 50-step latency, not the search's
    scaling = re.search(r'<figure class="chart" id="scaling-chart".*?</figure>', dom, re.S).group(0)
    assert "(whatif model)" in scaling and "(measured)" in scaling      # the model's line beside the points


# Measured in the page itself, once it has laid out: every table's box holds its table (no column
# cut off behind a scroll bar), no row is taller than three lines of its text (plus its padding),
# and the first screen (the answer) names no diverged figure.
MEASURE = """<script>
window.addEventListener('load', () => {
  const out = {over: [], tall: [], answer: ''};
  for (const w of document.querySelectorAll('.tablewrap')) {
    const t = w.querySelector('table');
    if (w.scrollWidth > w.clientWidth + 1) out.over.push(t.id + ':' + w.scrollWidth + '>' + w.clientWidth);
    for (const tr of t.querySelectorAll('tr')) {
      const td = tr.querySelector('td, th');
      const cs = getComputedStyle(td);
      const pad = parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom) + 2;
      const lh = Math.max(...[...tr.children].map(c => parseFloat(getComputedStyle(c).lineHeight) || 19));
      const h = tr.getBoundingClientRect().height;
      if (h > 3 * lh + pad) out.tall.push(t.id + ':' + Math.round(h) + 'px:' + tr.textContent.trim().slice(0, 60));
    }
  }
  const a = document.getElementById('answer');
  out.answer = a ? a.innerText : '';
  document.body.setAttribute('data-measure', JSON.stringify(out));
});
</script>"""


def measure(chromium: str, page: str, tmp_path, width: int) -> dict:
    html = open(page, encoding="utf-8").read().replace("</body>", MEASURE + "</body>")
    probe = tmp_path / "probe.html"
    probe.write_text(html, encoding="utf-8")
    dom = browse(chromium, tmp_path, f"--window-size={width},900", "--dump-dom", "file://" + str(probe)).stdout
    m = re.search(r'data-measure="([^"]*)"', dom)
    assert m, dom[-2000:]
    return json.loads(unescape(m.group(1)))


def shots(chromium: str, page: str, tmp_path) -> list[str]:
    """Screenshots of the first screen at a laptop's and a phone's width, for a person to look at:
    in $GPUARENA_SHOTS when set, else beside the test's files."""
    out = os.environ.get("GPUARENA_SHOTS") or str(tmp_path)
    os.makedirs(out, exist_ok=True)
    written = []
    for width, height in ((1300, 1000), (400, 860)):
        shot = os.path.join(out, f"report-{width}.png")
        browse(chromium, tmp_path, "--hide-scrollbars", f"--screenshot={shot}", f"--window-size={width},{height}",
               "file://" + os.path.abspath(page))
        assert os.path.exists(shot)
        written.append(shot)
    return written


def diverged_figures(store) -> set[str]:
    """The headline figures of diverged (NaN) results that no finite result shares, as the report prints them."""
    from gpuarena.report import headline as H

    rows = [r for r in store.results(status="ok") if r.source != "published" and r.throughput_median]
    text = lambda r: H.text(r) if H.value(r) is not None else ""   # noqa: E731
    nan = {text(r) for r in rows if r.extra.nan}
    return {t for t in nan - {text(r) for r in rows if not r.extra.nan} if t}


def check_reader_view(chromium: str, page: str, tmp_path, store) -> dict:
    seen = measure(chromium, page, tmp_path, 1300)
    assert seen["over"] == [], seen["over"]          # every table fits its box at 1,300 px
    assert seen["tall"] == [], seen["tall"][:10]     # no row taller than three lines
    first = seen["answer"]
    assert first and "NaN" not in first, first
    shown = [f for f in diverged_figures(store) if f in first]
    assert not shown, shown                          # no diverged figure on the first screen
    phone = measure(chromium, page, tmp_path, 400)
    assert phone["over"] == [], phone["over"]        # and on a phone: rows become cards, nothing scrolls
    return seen


def test_reader_sees_tables_that_fit_and_no_diverged_figure(chromium, report_db, tmp_path):
    store = Store(report_db)
    page = write_report(store, str(tmp_path / "report.html"))
    seen = check_reader_view(chromium, page, tmp_path, store)
    assert "0.418 s/image" in seen["answer"]         # SD in its article unit on the first screen
    from PIL import Image

    a, b = shots(chromium, page, tmp_path)
    assert Image.open(a).size == (1300, 1000) and Image.open(b).size == (400, 860)


@pytest.mark.skipif(not os.path.exists(BUNDLES), reason="the shipped bundles are not in this checkout")
def test_reader_view_of_the_shipped_bundles(chromium, tmp_path):
    """The same on the report docs/report.html is written from (scripts/docs_report.sh)."""
    db = str(tmp_path / "docs.db")
    store = Store(db)
    for name in sorted(os.listdir(BUNDLES)):
        if name.endswith(".json"):
            import_bundle(store, os.path.join(BUNDLES, name))
    load_into(store)
    page = write_report(store, str(tmp_path / "report.html"), baseline="A100 40GB SXM4")
    assert diverged_figures(store)                   # the bundles hold diverged runs: the check has teeth
    seen = check_reader_view(chromium, page, tmp_path, store)
    assert "images/s" in seen["answer"] and "tokens/s per GPU" in seen["answer"]
    shots(chromium, page, tmp_path)
