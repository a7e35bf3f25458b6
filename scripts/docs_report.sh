#!/bin/sh
# Rebuild docs/report.md and docs/report.html from the H200 bundles in docs/data
# (and the shipped published results, which the comparison and cost sections use), and
# docs/report.png / docs/report-phone.png: the first screen in headless Chromium at 1,300 px
# and 400 px wide, as tests/report/test_browser.py takes them (scripts/install_chromium.sh).
set -e
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
DB=$(mktemp -d)/docs.db
for b in h200-2026-11-29 h200-x2-2026-11-29 h200-s3-2026-11-29 h200-s4-2026-11-29 h200-s5-2026-11-30 h200-s5-resnet-2026-11-30 \
         h200-s6-serve-2026-12-01 h200-s6-default-2026-12-01 h200-s6-doctor-2026-12-01 \
         h200-s7-b64-2026-12-01 h200-s7-attn-2026-12-01 h200-s7-endpoint-2026-12-01 h200-s7-own-2026-12-01 \
         h200-s8-rungs-2026-12-01 h200-s8-int8-2026-12-01 h200-s9-serve-2026-12-01 h200-s10-2026-12-02 h200-s11-2026-12-02 \
         h200-s12-2026-12-02 h200-s13-2026-12-02 h200-s14-2026-12-02 h200-doctor-2026-12-04; do
  $PY -m gpuarena import "docs/data/$b.json" --db "$DB" >/dev/null
done
$PY -m gpuarena import --published --db "$DB" >/dev/null
$PY -m gpuarena report --db "$DB" -b "A100 40GB SXM4" -o docs/report.md
$PY -m gpuarena report --db "$DB" -b "A100 40GB SXM4" -o docs/report.html
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ -x "$CHROMIUM" ]; then
  PROFILE=$(mktemp -d)
  for shot in "report.png 1300,1000" "report-phone.png 400,860"; do
    set -- $shot
    "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
      --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$PROFILE" \
      --screenshot="docs/$1" --window-size="$2" "file://$(pwd)/docs/report.html" >/dev/null 2>&1
    echo "docs/$1"
  done
  rm -rf "$PROFILE"
else
  echo "no Chromium at $CHROMIUM: docs/report.png not rewritten (scripts/install_chromium.sh)" >&2
fi
