"""The report in a real browser: headless Chromium renders it, the screenshot is not blank,
and the DOM it builds holds the tables and every chart."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from gpuarena.report.html import write_report
from gpuarena.store.db import Store

CHROMIUM = "/usr/bin/chromium"
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
                          capture_output=True, text=True, timeout=120)


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
    assert rows("claims-table") == 20 and rows("cost-table") == 5 and rows("advice-resnet50-train-table") == 5   # one row per claim in data/article_claims.csv
    # SD v1.5 in the article's unit: seconds per image in its tile, table and cost rows; the search's batch
    sd = re.search(r'<table id="wl-sd15-generate-throughput".*?</table>', dom, re.S).group(0)
    assert "median s/image" in sd and "1.59" in sd and "&gt;= 256 (the cap)" in sd
    tile = re.search(r'<div class="label">sd15-generate</div><div class="value">([^<]*)</div>', dom)
    assert tile and tile.group(1) == "0.418 s/image"        # the 50-step latency, not the search's TFLOP/s
    scaling = re.search(r'<figure class="chart" id="scaling-chart".*?</figure>', dom, re.S).group(0)
    assert "(whatif model)" in scaling and "(measured)" in scaling      # the model's line beside the points


# Measured in the page itself: every table's box holds its table (no column cut off behind a
# scroll bar), at the width of a laptop screen.
MEASURE = """<script>
document.addEventListener('DOMContentLoaded', () => {
  const over = [...document.querySelectorAll('.tablewrap')].filter(w => w.scrollWidth > w.clientWidth + 1)
    .map(w => w.querySelector('table').id + ':' + w.scrollWidth + '>' + w.clientWidth);
  document.body.setAttribute('data-overflow', over.join(' ') || 'none');
});
</script>"""


def test_sd_table_fits_its_box(chromium, report_db, tmp_path):
    page = write_report(Store(report_db), str(tmp_path / "report.html"))
    html = open(page, encoding="utf-8").read().replace("</body>", MEASURE + "</body>")
    probe = tmp_path / "probe.html"
    probe.write_text(html, encoding="utf-8")
    dom = browse(chromium, tmp_path, "--window-size=1440,900", "--dump-dom", "file://" + str(probe)).stdout
    over = re.search(r'data-overflow="([^"]*)"', dom).group(1)
    assert "wl-sd15-generate-throughput" not in over, over
