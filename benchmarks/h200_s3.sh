#!/usr/bin/env bash
# Third H200 session (2026-11-29): the pushes benchmarks/h200_next.sh planned, as one suite per call
# so that each comparison is a ratio within one run.  Each part fits one 10-minute device call.
#   bash benchmarks/h200_s3.sh 1   # BERT-Large compiled by scope (encoder vs whole model) vs eager; matmul burst
#   bash benchmarks/h200_s3.sh 2   # SD v1.5 batch 1: UNet + VAE compiled, with and without CUDA graphs
#   bash benchmarks/h200_s3.sh 3   # ResNet-50 batch 512: fused SGD, cuDNN autotuning, CUDA graphs; GPU tests
#   bash benchmarks/h200_s3.sh 4   # ResNet-50 with CUDA graphs: fp16 autocast beside bf16, batch 512 and 768
#   bash benchmarks/h200_s3.sh 5   # ResNet-50 batch 768: bf16 and fp16, the article's loss and cross-entropy
#   bash benchmarks/h200_s3.sh 6   # ResNet-50 that stays finite: batch 640 and 1024, cuDNN autotuning at 768
#   bash benchmarks/h200_s3.sh 7   # the tuning ladder of BERT-Large inference, one run, 3 repeats
set -u
PART=${1:?part 1 to 7}
. "$(dirname "$0")/h200_common.sh"
S=benchmarks/suites
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
[ "$PART" = 4 ] && t 540 $RUN --suite $S/h200-resnet-fp16.yaml
[ "$PART" = 5 ] && t 540 $RUN --suite $S/h200-resnet-768.yaml
[ "$PART" = 6 ] && t 540 $RUN --suite $S/h200-resnet-finite.yaml
[ "$PART" = 7 ] && t 540 $RUN --suite $S/h200-ladder-bert-infer.yaml
python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"
