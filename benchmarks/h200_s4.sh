#!/usr/bin/env bash
# Fourth H200 session (2026-11-29): the tuning ladder's last rungs and article 001's matrix, as
# the four device calls ran them (the database carried in .gpu/h200.db from one call to the next;
# the run ids are those of that database: a --resume of another database's run fails alone).
#   bash benchmarks/h200_s4.sh 1   # the BERT-infer ladder's last case; the SD ladder (cut before its last rung)
#   bash benchmarks/h200_s4.sh 2   # the SD ladder's last rung; the BERT-train ladder (cut before max-autotune)
#   bash benchmarks/h200_s4.sh 3   # the BERT-train ladder's last rung; seed-pt2's matmul and BERT-infer entries
#   bash benchmarks/h200_s4.sh 4   # seed-pt2's SD and ResNet-50 entries
set -u
PART=${1:?part 1 to 4}
. "$(dirname "$0")/h200_common.sh"
if [ "$PART" = 1 ]; then
  t 120 $RUN --resume 20261129-183733-345106
  t 420 $RUN --suite tuning-ladder -w sd15-generate
fi
if [ "$PART" = 2 ]; then
  t 130 $RUN --resume 20261129-192404-4a65f9
  t 440 $RUN --suite tuning-ladder -w bert-large-train
fi
if [ "$PART" = 3 ]; then
  t 400 $RUN --resume 20261129-193307-ef340a
  t 60 $RUN --suite seed-pt2 -w matmul
  t 110 $RUN --suite seed-pt2 -w bert-large-infer
fi
if [ "$PART" = 4 ]; then
  t 80 $RUN --suite seed-pt2 -w sd15-generate
  t 160 $RUN --suite seed-pt2 -w resnet50-train
fi
python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"
