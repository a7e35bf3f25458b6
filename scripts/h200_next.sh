#!/usr/bin/env bash
# What the H200 measurements of 2026-11-29 left for the next device session (both sessions' device
# time is spent), in priority order.  Each part fits one 10-minute call; carry the database in
# .gpu/h200.db (ignored by git; seed it with `gpuarena import docs/data/h200-2026-11-29.json` and
# docs/data/h200-x2-2026-11-29.json so ceilings and baselines are there).
#   bash scripts/h200_next.sh A   # issue 2 push past 7,367 images/s; matmul burst vs sustained
#   bash scripts/h200_next.sh B   # issue 3: SD v1.5 compiled (launch-bound at batch 1), BERT compile
# Done on 2026-11-29 (x2 host) and so gone from here: ResNet-50 batch 1024 (7,152, power-capped),
# BERT DDP variants at N = 1, BERT inference batch 128, BERT training batch 64, SD max-batch search.
set -u
PART=${1:?part A or B}
. "$(dirname "$0")/h200_common.sh"
if [ "$PART" = A ]; then
  # batch 512 was the best; batch 1024 hit the 700 W cap harder.  Fewer kernels per step instead:
  # the fused optimizer, cuDNN autotuning, and CUDA graphs (compile mode reduce-overhead)
  t 150 $RUN -w resnet50-train --variant amp-bf16+channels-last+compile+fused-sgd \
      --variant amp-bf16+channels-last+compile+cudnn-benchmark+fused-sgd --set batch_size=512 --repeats 5
  t 200 $RUN -w resnet50-train --variant amp-bf16+channels-last+compile+fused-sgd \
      --set compile_mode=reduce-overhead --set batch_size=256,512 --repeats 5
  # matmul bf16 8192^3: a short burst (3 warm-up, 1 product per repeat) beside the sustained 500
  t 60 $RUN -w matmul --set dtype=bf16 --set warmup=3 --set steps=1 --repeats 10
fi
if [ "$PART" = B ]; then
  # SD v1.5 batch 1: compiled UNet+VAE (launch-bound at 5-7% of the ceiling)
  t 300 $RUN -w sd15-generate --variant sdpa+channels-last+fused-qkv+compile --set compile_mode=max-autotune-no-cudagraphs \
      --set warmup=1 --repeats 5
  # BERT-Large inference compiled was slower (853/s vs 1,422 eager): max-autotune instead of default
  t 200 $RUN -w bert-large-infer --variant bf16+sdpa+compile --set compile_mode=max-autotune --set batch_size=64 --set warmup=3 --set steps=5 --repeats 5
fi
python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"
