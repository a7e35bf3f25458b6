#!/usr/bin/env bash
# Session 5 (2026-11-30) on the lent nvidia-h200-x2: the large-model workloads (issues 16, 17).
# Each part fits one 10-minute device call; the database travels between calls in .gpu/h200.db.
# torchao (FP8) is not on the GPU box: its wheel travels in .whl/ (torchao 0.17.0, for torch 2.11).
#   bash benchmarks/h200_s5.sh 1   # every new workload tiny on CUDA (catches what the CPU cannot), llama-1b bf16 vs FP8
#   bash benchmarks/h200_s5.sh 2   # llm-serve llama3-8b: eager seed vs compiled decode, batch 1 / 64, the batch curve; membw
#   bash benchmarks/h200_s5.sh 3   # two GPUs: llama-1b FSDP2 at 1 and 2, TP=2; llama3-8b FSDP2; resnet50-infer rungs
set -u
PART=${1:?part 1, 2 or 3}
if ls .whl/torchao-*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
. "$(dirname "$0")/h200_common.sh"
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 -c "import torch, torchao; print('torch', torch.__version__, 'torchao', torchao.__version__)" 2>&1 | tail -1
L1B="--set shape=llama-1b --set seq_len=2048"
if [ "$PART" = 1 ]; then
  TAIL=6 t 120 $RUN -w llm-train --set size=tiny -v amp-bf16+compile+fused-adamw -v bf16+fp8 -r 2
  TAIL=6 t 60 $RUN -w llm-serve --set size=tiny -v seed -v static-cache -v compile -v fp8-weights -r 2
  TAIL=8 t 100 $RUN -w resnet50-infer --set size=tiny -v fp32 -v bf16+channels-last+compile -v aot-inductor -v tensorrt -r 2
  TAIL=16 t 330 $RUN -w llm-train $L1B --set batch_size=8 -v amp-bf16+compile+fused-adamw \
      -v bf16+compile+fused-adamw -v bf16+compile+fused-adamw+fp8 -r 5
fi
if [ "$PART" = 2 ]; then
  L8B="--set shape=llama3-8b --set prompt_len=512 --set new_tokens=128"
  t 40 $RUN -w membw -r 5
  TAIL=10 t 200 $RUN -w llm-serve $L8B -v seed --set batch_size=1,64 --set warmup=1 --set steps=1 -r 3
  TAIL=14 t 330 $RUN -w llm-serve $L8B -v compile --set batch_size=1,16,64,256 --set warmup=1 --set steps=1 -r 3
fi
if [ "$PART" = 3 ]; then
  TAIL=10 t 300 $RUN -w llm-train $L1B --set batch_size=8 --set parallel=fsdp --gpus 1,2 -v bf16+compile+fused-adamw -r 5
  TAIL=6 t 120 $RUN -w llm-train $L1B --set batch_size=8 --set parallel=tp --gpus 2 -v bf16+compile+fused-adamw -r 5
  TAIL=6 t 150 $RUN -w llm-train --set shape=llama3-8b --set seq_len=2048 --set batch_size=2 --set parallel=fsdp \
      --gpus 2 -v bf16+compile+fused-adamw -r 3 --set warmup=2 --set steps=5
fi
if [ "$PART" = 4 ]; then
  TAIL=12 t 300 $RUN -w resnet50-infer -v fp32 -v tf32 -v bf16+channels-last -v bf16+channels-last+compile \
      -v aot-inductor -v tensorrt --set batch_size=1,256 -r 5
  TAIL=6 t 150 $RUN -w resnet50-infer -v bf16+channels-last --set batch_size=1 --set instances=2 -r 5
fi
mkdir -p .gpu && cp "$DB" .gpu/h200.db
python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"
python3 -m gpuarena export --db "$DB" -o "$OUT/h200-s5.json" >/dev/null 2>&1 || true
