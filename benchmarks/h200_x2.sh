#!/usr/bin/env bash
# Issue 8 on the lent nvidia-h200-x2 (2 H200s of one host); each part fits one 10-minute call.
# The database travels between calls in .gpu/h200.db (ignored by git), seeded from
# docs/data/h200-2026-11-29.json so the N = 1 figures and matmul ceilings are there.
#   bash benchmarks/h200_x2.sh 1   # topology, all-reduce 1 KiB-4 GiB, ResNet-50 DDP at N = 1, 2 (5 variants)
#   bash benchmarks/h200_x2.sh 2   # BERT-Large DDP at N = 1, 2 (5 variants), the other collectives
#   bash benchmarks/h200_x2.sh 3   # single-GPU goals left by issues 2 and 3
# The whatif prediction made before part 1 is in docs/whatif.md.
set -u
PART=${1:?part 1, 2 or 3}
. "$(dirname "$0")/h200_common.sh"
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1   # with NCCL_NVLS_ENABLE=0 (common)
SIZES=0.0009765625,0.0078125,0.0625,0.5,4,32,256,1024,4096           # MiB: nccl-tests' x8 sweep
if [ "$PART" = 1 ]; then
  { nvidia-smi topo -m; nvidia-smi nvlink -s; nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.max,pcie.link.width.max,power.limit --format=csv; } > "$OUT/topo.txt" 2>&1
  head -12 "$OUT/topo.txt"
  t 150 $RUN -w allreduce --gpus 2 --set size_mb=$SIZES --repeats 5
  TAIL=14 t 330 $RUN -w ddp-train --gpus 1,2 --variant seed --variant static-graph --variant fp16-compress \
      --variant bf16-compress --variant no-sync --set model=resnet50 --set model_variant=amp-bf16+channels-last \
      --set batch_size=256 --repeats 5
fi
if [ "$PART" = 2 ]; then
  TAIL=14 t 360 $RUN -w ddp-train --gpus 1,2 --variant seed --variant static-graph --variant fp16-compress \
      --variant bf16-compress --variant no-sync --set model=bert-large --set model_variant=amp-bf16+sdpa --repeats 5
  for w in reducescatter allgather broadcast; do t 60 $RUN -w $w --gpus 2 --set size_mb=$SIZES --repeats 5; done
fi
if [ "$PART" = 3 ]; then
  t 120 $RUN -w resnet50-train --variant amp-bf16+channels-last+compile+cudnn-benchmark \
      --set batch_size=1024 --set loss=cross-entropy --repeats 5
  t 120 $RUN -w bert-large-infer --variant bf16+sdpa --set batch_size=128 --set batch_size=256 --set warmup=3 --set steps=5 --repeats 5
  t 150 $RUN -w sd15-generate --set search=max-batch --set search_max=256 --set inference_steps=10 --set warmup=0 --repeats 1 --set steps=1
  t 150 $RUN -w bert-large-train --variant amp-bf16+sdpa+fused-adamw --set batch_size=64 --set warmup=3 --set steps=3 --repeats 5
fi
python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"
