#!/usr/bin/env bash
# What the H200 measurements of 2026-11-29 left unmeasured (device time ran out), in priority
# order, for the next session's device calls.  Each part fits one 10-minute call; carry the
# previous database in .gpu/h200.db (ignored by git) so ceilings and baselines are shared.
#   bash scripts/h200_next.sh A   # goals: matmul burst vs sustained, SD compile / max-batch, ResNet push
#   bash scripts/h200_next.sh B   # BERT DDP variants (issue 4), BERT push, tuning ladder remainder
set -u
PART=${1:?part A or B}
. "$(dirname "$0")/h200_common.sh"
if [ "$PART" = A ]; then
  # matmul bf16 8192^3: a short burst (3 warm-up, 1 product per repeat) beside the sustained 500
  t 60 $RUN -w matmul --set dtype=bf16 --set warmup=3 --set steps=1 --repeats 10
  # SD v1.5 batch 1: compiled UNet+VAE with CUDA graphs (launch-bound at 5-7% of the ceiling)
  t 240 $RUN -w sd15-generate --variant sdpa+channels-last+fused-qkv+compile --set compile_mode=max-autotune-no-cudagraphs \
      --variant sdpa+channels-last+compile --set warmup=1 --repeats 5
  # article 000's "maximum concurrent generations"
  t 150 $RUN -w sd15-generate --set search=max-batch --set search_max=256 --set inference_steps=10 --set warmup=0 --repeats 1 --set steps=1
  # ResNet-50 push past 7,367 images/s
  t 120 $RUN -w resnet50-train --variant amp-bf16+channels-last+compile+cudnn-benchmark \
      --set batch_size=1024 --set loss=cross-entropy --repeats 5
fi
if [ "$PART" = B ]; then
  TAIL=8 t 240 $RUN -w ddp-train --variant static-graph --variant fp16-compress --variant bf16-compress --variant no-sync \
      --set model=bert-large --set model_variant=amp-bf16+sdpa --set accum_steps=2 --repeats 5 --set warmup=3 --set steps=5
  t 200 $RUN -w bert-large-train --variant amp-bf16+sdpa+fused-adamw --set batch_size=64 \
      --variant amp-bf16+sdpa+fused-adamw+compile-max-autotune --set warmup=3 --set steps=3 --repeats 5
  t 120 $RUN -w bert-large-infer --variant bf16+sdpa --set batch_size=128 --set warmup=3 --set steps=5 --repeats 5
fi
python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"
