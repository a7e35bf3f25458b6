#!/bin/sh
# Rebuild docs/report.md and docs/report.html from the H200 bundles in docs/data
# (and the shipped published results, which the comparison and cost sections use).
set -e
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
DB=$(mktemp -d)/docs.db
for b in h200-2026-11-29 h200-x2-2026-11-29 h200-s3-2026-11-29 h200-s4-2026-11-29 h200-s5-2026-11-30 h200-s5-resnet-2026-11-30; do
  $PY -m gpuarena import "docs/data/$b.json" --db "$DB" >/dev/null
done
$PY -m gpuarena import --published --db "$DB" >/dev/null
$PY -m gpuarena report --db "$DB" -b "A100 40GB SXM4" -o docs/report.md
$PY -m gpuarena report --db "$DB" -b "A100 40GB SXM4" -o docs/report.html
