#!/usr/bin/env bash
# Issue 4 (multi-GPU) on the lent GPU box.  Run from the repo root:  bash benchmarks/gpu_issue4.sh
#
# Single H200 now: the N=1 baselines of ddp-train (ResNet-50 and BERT-Large, every
# DDP variant) beside the plain workloads: 12 cases, about 4 minutes (each case
# ~15 s of torchrun start-up, model build and cuDNN/cuBLAS warm-up, plus 5 x 5
# timed steps and ~15 steps of the communication probe).
set -u
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
DB=$OUT/h200.db
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv | tee "$OUT/nvsmi.txt"
python3 -m gpuarena env > "$OUT/env.json"
time python3 -m gpuarena run -q --db "$DB" --suite ddp-single 2>&1 | tee "$OUT/ddp-single.txt" | tail -25
python3 -m gpuarena results --db "$DB" --workload ddp-train --format json > "$OUT/ddp-single.json"

# Later, on machines with 2, 4 or 8 GPUs (withheld now; do not run on the single H200):
#   python3 -m gpuarena run -q --db "$OUT/x8.db" --suite multi-gpu            # 1..8 GPUs, counts above
#                                                                            # those present are skipped
#   ~40 ddp-train cases (~20 s each) + 108 collective cases (~10 s each): about 35 minutes on 8 GPUs.
#   Quicker look at scaling only:
#   python3 -m gpuarena run -q --db "$OUT/x8.db" -w ddp-train --gpus 1,2,4,8 \
#       --set model_variant=amp-bf16+channels-last --set batch_size=256 --repeats 5
#   python3 -m gpuarena run -q --db "$OUT/x8.db" -w allreduce --gpus 8 --set size_mb=1024 --repeats 5
