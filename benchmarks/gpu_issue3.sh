#!/usr/bin/env bash
# Issue 3 on the lent H200: the ceilings (micro), the four goals, article 000's matrix,
# then (time permitting) the full tuning ladder.  Run from the repo root on the GPU box:
#     bash benchmarks/gpu_issue3.sh            (writes under $OUT; ~12 minutes without the ladder)
# Order = priority: matmul first, so every later result gets extra.share_of_ceiling.
# Times are estimates for one H200 (each case also pays ~5-15 s of process start and model build).
set -u
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
DB=$OUT/h200.db
RUN="python3 -m gpuarena run -q --db $DB"
# diffusers is not installed on the box: install the carried wheels (sd15-generate imports it lazily).
python3 -c "import diffusers" 2>/dev/null || pip install -q --no-index --find-links "${WHEELS:-wheels}" diffusers
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,temperature.gpu --format=csv | tee "$OUT/nvsmi.txt"
python3 -m gpuarena env > "$OUT/env.json"

# 1. Ceilings (~2 min, 16 cases): matmul fp32/tf32/bf16/fp16/fp8 at 8192^3 and BERT shapes, membw, h2d/d2h.
time $RUN --suite micro 2>&1 | tee "$OUT/micro.txt" | tail -22
# Goal 4, matmul bf16 8192^3 within 5% of the best: repeat with more rotated input sets (~20 s).
$RUN -w matmul --set dtype=bf16 --set sets=16 --set steps=200 2>&1 | tail -4

# 2. The goals' best recipes (~4 min).
# BERT-Large inference, 512 tok, batch 64, goal >= 1500 seq/s (~0.5 PFLOP/s: needs bf16/fp16 + flash attention).
$RUN -w bert-large-infer --variant bf16+sdpa --variant fp16+sdpa --variant bf16+sdpa+compile \
    --set batch_size=64 --set warmup=3 --set steps=5 2>&1 | tail -6
# BERT-Large training, 512 tok, goal >= 300 seq/s.
$RUN -w bert-large-train --variant amp-bf16+sdpa+fused-adamw --variant amp-bf16+sdpa+fused-adamw+compile \
    --set batch_size=32 --set warmup=3 --set steps=3 --repeats 5 2>&1 | tail -5
# SD v1.5 512x512, 50 steps, batch 1, goal <= 0.8 s/image (>= 1.25 images/s).
$RUN -w sd15-generate --variant sdpa+channels-last+fused-qkv --variant sdpa+channels-last+fused-qkv+compile \
    --set steps=1 --set warmup=1 --repeats 5 2>&1 | tail -5

# 3. Article 000's matrix (~6 min, 14 cases), the default suite on a GPU.
time $RUN --suite seed-a100-a800 2>&1 | tee "$OUT/seed-a100-a800.txt" | tail -20

python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"

# 4. Only with time to spare (RUN_LADDER=1): the full tuning ladder, 41 cases, ~20-25 min
#    (compile-max-autotune of BERT training alone can take 5+ minutes); article 001's suite ~8 min.
if [ "${RUN_LADDER:-0}" = 1 ]; then
    time $RUN --suite tuning-ladder 2>&1 | tee "$OUT/tuning-ladder.txt" | tail -45
    time $RUN --suite seed-pt2 2>&1 | tee "$OUT/seed-pt2.txt" | tail -16
    python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"
fi
