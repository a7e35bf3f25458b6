#!/usr/bin/env bash
# Session 10 (2026-12-02) on one lent nvidia-h200: issue 23's weight-only rungs, ResNet-50's stem, the curve.
#   cd .serve && bash benchmarks/h200_s10.sh a       # ResNet-50's stem written 8 ways and its kernels (bias fold);
#                                                    # llama3-8b batch 1: bf16 (compiled prefill) and int8 v5
#   cd .serve && bash benchmarks/h200_s10.sh b       # int4 v5 and bf16 (eager prefill) at batch 1, flex at batch 128
#   cd .serve && bash benchmarks/h200_s10.sh c       # ResNet-50 v2 at batch 256: the space-to-depth stem and the
#                                                    # compiled max pool against the plain stem, in one run
#   cd .serve && bash benchmarks/h200_s10.sh d       # the CUDA-graph rung's NaN at batch 256 (graph_nan.py); v3
#   cd .serve && bash benchmarks/h200_s10.sh e       # the same rung driven as the runner drives it, step by step
# One case per process; each case has its own time limit (timeout_s) below the outer one, so a case that runs
# long is stored as a timeout with its stderr.  The first request of a process holds compilation.
SESSION=s10 PART=${1:-a}
. benchmarks/serve_calls.sh
quiet() { grep -v -E "Warning|^(STAGE|USDT|ERROR:)|warn\(" ; }
if [ "$PART" = a ]; then
  echo "### ResNet-50 stem ($(date +%T))"; timeout 100 python3 benchmarks/resnet_stem.py 2>&1 | quiet | tail -12
  echo "### ResNet-50 kernels ($(date +%T))"; timeout 60 python3 benchmarks/resnet_profile.py 2>&1 | quiet | tail -18
  t 260 $L8B -v compile+fused-proj --set batch_size=1 --set profile=1 -r 3 --set timeout_s=250
  t $(left) $L8B -v compile+fused-proj+int8-weights --set batch_size=1 --set profile=1 -r 3 --set timeout_s=$(left 12)
fi
if [ "$PART" = b ]; then
  t 230 $L8B -v compile+fused-proj+int4-weights --set batch_size=1 --set profile=1 -r 3 --set timeout_s=220
  t 230 $L8B -v compile+fused-proj --set batch_size=1 --set prefill=eager --set profile=1 -r 3 --set timeout_s=220
  [ "$(left)" -gt 120 ] && t $(left) $L8B -v compile+fused-proj --set batch_size=128 -r 3 --set timeout_s=$(left 12)
fi
if [ "$PART" = c ]; then
  R="-w resnet50-infer --set batch_size=256 -r 5 --set timeout_s=80"
  t 250 $R -v bf16+channels-last+cudnn-benchmark+cudnn-fused+cuda-graph -v bf16+channels-last+cudnn-benchmark+cudnn-fused \
        --set stem=s2d,plain
  echo "### ResNet-50 kernels ($(date +%T))"; timeout 60 python3 benchmarks/resnet_profile.py 2>&1 | quiet | tail -16
fi
if [ "$PART" = d ]; then
  echo "### graph NaN ($(date +%T))"; timeout 120 python3 benchmarks/graph_nan.py 2>&1 | quiet | tail -14
  t 150 -w resnet50-infer --set batch_size=256 -r 5 --set timeout_s=70 -v bf16+channels-last+cudnn-benchmark+cudnn-fused \
        --set stem=s2d,plain
fi
if [ "$PART" = e ]; then
  echo "### graph NaN by step ($(date +%T))"; timeout 100 python3 benchmarks/graph_nan_steps.py 256 60 2>&1 | quiet | tail -8
  exit 0
fi
summary | tee "$OUT/summary.txt"
