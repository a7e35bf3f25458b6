#!/usr/bin/env bash
# Session 11 (2026-12-02) on one lent nvidia-h200: issue 23's CUDA-graph fix, the compiled batch-1 prefill,
# FP8 weights in the decode.
#   cd .serve && bash benchmarks/h200_s11.sh a   # ResNet-50 inference's CUDA-graph rung (the graph now holds its
#                                                # model) against eager, batch 256 and 1, one run; llama3-8b
#                                                # batch 1 with the compiled prefill (cold: >250 s of compilation)
#   cd .serve && bash benchmarks/h200_s11.sh b   # llama3-8b batch 1: fp8-weights (v6: FP8 weights upcast inside
#                                                # the decode's matrix-vector products) and bf16, eager prefill
#   cd .serve && bash benchmarks/h200_s11.sh c   # fp8-weights and bf16 at batch 64, eager prefill (FP8's decode on the
#                                                # FP8 tensor cores: 64 rows)
#   cd .serve && bash benchmarks/h200_s11.sh d   # fp8-weights at batch 64 and 1 with the compiled prefill (FP8 cores)
# One case per process; each case has its own time limit (timeout_s) below the outer one.
SESSION=s11 PART=${1:-a}
. benchmarks/serve_calls.sh
if [ "$PART" = a ]; then
  t 190 -w resnet50-infer --set batch_size=256,1 -r 5 --set timeout_s=80 \
        -v bf16+channels-last+cudnn-benchmark+cudnn-fused+cuda-graph -v bf16+channels-last+cudnn-benchmark+cudnn-fused
  t $(left) $L8B -v compile+fused-proj --set batch_size=1 --set profile=1 -r 3 --set timeout_s=$(left 12)
fi
if [ "$PART" = b ]; then
  t 260 $L8B -v compile+fused-proj+fp8-weights --set batch_size=1 --set profile=1 -r 3 --set timeout_s=250
  t $(left) $L8B -v compile+fused-proj --set batch_size=1 --set prefill=eager --set profile=1 -r 3 --set timeout_s=$(left 12)
fi
if [ "$PART" = c ]; then
  t 280 $L8B -v compile+fused-proj+fp8-weights --set batch_size=64 -r 3 --set timeout_s=270
  t $(left) $L8B -v compile+fused-proj --set batch_size=64 --set prefill=eager -r 3 --set timeout_s=$(left 12)
fi
if [ "$PART" = d ]; then
  t 300 $L8B -v compile+fused-proj+fp8-weights --set batch_size=64 --set prefill=compile -r 3 --set timeout_s=290
  [ "$(left)" -gt 150 ] && t $(left) $L8B -v compile+fused-proj+fp8-weights --set batch_size=1 --set prefill=compile \
        -r 3 --set timeout_s=$(left 12)
fi
summary | tee "$OUT/summary.txt"
