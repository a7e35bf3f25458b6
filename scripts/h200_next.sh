#!/usr/bin/env bash
# What the H200 sessions of 2026-11-29 left for the next device session (all three sessions'
# device time is spent), in priority order.  Each part fits one 10-minute call; carry the
# database in .gpu/h200.db (ignored by git: the session's own database, which holds the
# interrupted ladder run; on a fresh checkout seed it with `gpuarena import` of the three
# bundles in docs/data/ for the ceilings and baselines; the --resume line then fails alone).
#   bash scripts/h200_next.sh A   # issue 3: the last BERT-infer ladder case; the SD rungs of the ladder
#   bash scripts/h200_next.sh B   # issue 3: the BERT-Large training rungs of the ladder
#   bash scripts/h200_next.sh C   # issue 3: the seed-pt2 suite (article 001's matrix), never run yet
# A part cut by the call's limit is finished with `gpuarena run --resume RUN_ID` (the id is printed).
# Done and so gone from here: ResNet-50 fused SGD / CUDA graphs / batch 768 (7,836 NaN, 7,479 finite),
# SD compiled (0.418 s/image), BERT compiled by scope (1,508 and 328.0 sequences/s), matmul burst.
set -u
PART=${1:?part A, B or C}
. "$(dirname "$0")/h200_common.sh"
if [ "$PART" = A ]; then
  t 120 $RUN --resume 20261129-183733-345106
  t 420 $RUN --suite tuning-ladder -w sd15-generate
fi
[ "$PART" = B ] && t 540 $RUN --suite tuning-ladder -w bert-large-train
[ "$PART" = C ] && t 540 $RUN --suite seed-pt2
python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"
