#!/usr/bin/env bash
# What the H200 sessions of 2026-11-29 left for the next device session (all four sessions'
# device time is spent).  Each part fits one 10-minute call; carry the database in .gpu/h200.db
# (ignored by git: the session's own database; on a fresh checkout seed it with `gpuarena
# import` of the bundles in docs/data/ for the ceilings and baselines).
#   bash benchmarks/h200_next.sh C   # issue 3: seed-pt2's BERT-Large training entries (article 001's
#                                 # whole-model max-autotune in TF32/bf16/fp16; eager vs SDPA)
#   bash benchmarks/h200_next.sh D   # --processes on the H200: SD v1.5 batch 1, seed against sdpa (the same
#                                 # code, 1.48 vs 1.29 s in two processes of one run) in 3 processes each
# A part cut by the call's limit is finished with `gpuarena run --resume RUN_ID` (the id is printed).
# Done and so gone from here (session 4, BENCHMARKS.md): A, the BERT-infer ladder's last case and
# the SD ladder; B, the BERT-train ladder; seed-pt2's matmul, BERT-infer, SD and ResNet entries.
set -u
PART=${1:?part C or D}
. "$(dirname "$0")/h200_common.sh"
[ "$PART" = C ] && t 540 $RUN --suite seed-pt2 -w bert-large-train
[ "$PART" = D ] && t 540 $RUN -w sd15-generate --variant seed --variant sdpa --set warmup=1 --set steps=1 \
  --repeats 5 --processes 3
python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"
