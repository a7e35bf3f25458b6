#!/usr/bin/env bash
# Issue 2 on the lent H200: ResNet-50 matrix, harness-overhead check, push for the best variant.
# Run from the repo root on the GPU box:  bash benchmarks/gpu_issue2.sh  (writes under $OUT)
set -u
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
DB=$OUT/h200.db
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,temperature.gpu --format=csv | tee "$OUT/nvsmi.txt"
python3 -m gpuarena env > "$OUT/env.json"
# The article's plain loop before and after the harness's seed case, same batch (overhead check).
python3 benchmarks/article_resnet50_loop.py --batch-size 256 | tee "$OUT/plain_before.json"
python3 -m gpuarena run -q --db "$DB" --suite seed-resnet50 2>&1 | tee "$OUT/seed-resnet50.txt" | tail -20
python3 benchmarks/article_resnet50_loop.py --batch-size 256 | tee "$OUT/plain_after.json"
# The push: bf16 + channels-last + compile at larger batches.
python3 -m gpuarena run -q --db "$DB" -w resnet50-train --variant amp-bf16+channels-last+compile \
    --set batch_size=512 --repeats 5 2>&1 | tail -5
python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"
