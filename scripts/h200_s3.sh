#!/usr/bin/env bash
# Third H200 session (2026-11-29): the pushes scripts/h200_next.sh planned, as one suite per call
# so that each comparison is a ratio within one run.  Each part fits one 10-minute device call.
#   bash scripts/h200_s3.sh 1   # BERT-Large compiled by scope (encoder vs whole model) vs eager; matmul burst
#   bash scripts/h200_s3.sh 2   # SD v1.5 batch 1: UNet + VAE compiled, with and without CUDA graphs
#   bash scripts/h200_s3.sh 3   # ResNet-50 batch 512: fused SGD, cuDNN autotuning, CUDA graphs; GPU tests
set -u
PART=${1:?part 1, 2 or 3}
. "$(dirname "$0")/h200_common.sh"
S=scripts/suites
if [ "$PART" = 1 ]; then
  t 420 $RUN --suite $S/h200-bert-compile.yaml
  # matmul bf16 8192^3 as a short burst (3 warm-up, 1 product per repeat) beside the sustained 500
  t 60 $RUN -w matmul --set dtype=bf16 --set warmup=3 --set steps=1 --repeats 10
fi
[ "$PART" = 2 ] && t 540 $RUN --suite $S/h200-sd-compile.yaml
if [ "$PART" = 3 ]; then
  t 400 $RUN --suite $S/h200-resnet-push.yaml
  TAIL=8 t 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py
fi
python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"
