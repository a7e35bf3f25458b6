#!/usr/bin/env bash
# Session 12 (2026-12-02) on one lent nvidia-h200: issue 23's one-token products through gpuarena's Triton
# matrix-vector kernel (workloads/llm/gemv.py), the batch-1 prefill's profile.
#   cd .serve && bash benchmarks/h200_s12.sh a   # benchmarks/gemv.py: llama3-8b's products, inductor against the kernel
#   cd .serve && bash benchmarks/h200_s12.sh b   # llm-serve batch 1: fp8+gemv, bf16, fp8, bf16+gemv (eager prefill: the
#                                                # decode is the question), profiled
#   cd .serve && bash benchmarks/h200_s12.sh c   # the batch-1 prefill profiled (benchmarks/prefill_b1.py), the
#                                                # curve's batch-256 point
# One case per process; each case has its own time limit (timeout_s) below the outer one.
SESSION=s12 PART=${1:-a}
. benchmarks/serve_calls.sh
if [ "$PART" = a ]; then
  timeout $(left 5) python3 benchmarks/gemv.py 2>&1 | grep -v Warning | tee "$OUT/gemv.txt"
fi
if [ "$PART" = b ]; then
  t 280 $L8B -v compile+fused-proj+fp8-weights+gemv --set batch_size=1 --set prefill=eager --set profile=1 -r 3 --set timeout_s=265
  t $(left) $L8B -v compile+fused-proj --set batch_size=1 --set prefill=eager --set profile=1 -r 3 --set timeout_s=$(left 15)
  [ "$(left)" -gt 150 ] && t $(left) $L8B -v compile+fused-proj+fp8-weights --set batch_size=1 --set prefill=eager \
        --set profile=1 -r 3 --set timeout_s=$(left 12)
  [ "$(left)" -gt 100 ] && t $(left) $L8B -v compile+fused-proj+gemv --set batch_size=1 --set prefill=eager --set profile=1 \
        -r 3 --set timeout_s=$(left 12)
fi
if [ "$PART" = c ]; then
  timeout 250 python3 benchmarks/prefill_b1.py ${AUTOTUNE:+--autotune} 2>&1 | grep -v Warning | tee "$OUT/prefill.txt"
  t $(left) $L8B -v compile+fused-proj --set batch_size=256 -r 3 --set timeout_s=$(left 12)
fi
summary | tee "$OUT/summary.txt"
