#!/usr/bin/env bash
# Session 9 (2026-12-01) on one lent nvidia-h200: issue 23's decode attention and quantised weights.
#   cd .serve && bash benchmarks/h200_s9.sh flex    # llm-serve llama3-8b bf16, SDPA against FlexAttention's
#                                                   # split-KV decode, batch 1 (both) and batch 64 (flex), profiled
#   cd .serve && bash benchmarks/h200_s9.sh quant   # int8 then fp8 weights (v3: eager prefill), batch 1, profiled
# One case per process (each gpuarena run is its own process and each case its own child); every case has its
# own time limit (timeout_s) below the outer one, so a case that runs long is stored as a timeout with its
# stderr.  The first request of a process holds compilation and is left out of the figures.
SESSION=s9 PART=${1:-flex}
ATTN=${ATTN:-flex}
. benchmarks/serve_calls.sh
if [ "$PART" = flex ]; then   # what ran first: every case timed out compiling from cold caches (165-200 s limits)
  t 40 -w membw -r 3 --set timeout_s=30
  t 175 $L8B -v compile+fused-proj --set batch_size=1 --set profile=1 -r 3 --set timeout_s=165
  t 165 $L8B -v compile+fused-proj --set batch_size=1 --set decode_attention=flex --set profile=1 -r 3 --set timeout_s=155
  t 210 $L8B -v compile+fused-proj --set batch_size=64 --set decode_attention=flex --set profile=1 -r 3 --set timeout_s=200
fi
if [ "$PART" = flex2 ]; then  # flex alone: batch 1 (eager prefill: the decode is the question) then batch 64
  t 250 $L8B -v compile+fused-proj --set batch_size=1 --set decode_attention=flex --set prefill=eager --set profile=1 \
        -r 3 --set timeout_s=240
  t $(left) $L8B -v compile+fused-proj --set batch_size=64 --set decode_attention=flex --set profile=1 -r 3 \
        --set timeout_s=$(left 12)
fi
if [ "$PART" = sdpa ]; then   # the SDPA baselines of flex2, on the same warm machine
  t 250 $L8B -v compile+fused-proj --set batch_size=1 --set prefill=eager --set profile=1 -r 3 --set timeout_s=240
  t $(left) $L8B -v compile+fused-proj --set batch_size=64 --set profile=1 -r 3 --set timeout_s=$(left 12)
fi
if [ "$PART" = final ]; then  # the last device time: server-started case children, the int8 GEMV, ResNet's kernels
  [ -f benchmarks/gpu_child_start.sh ] && timeout 120 bash benchmarks/gpu_child_start.sh 2>&1 | tail -25
  echo "### int8 GEMV ($(date +%T))"; timeout 110 python3 benchmarks/int8_gemv.py 2>&1 | grep -v Warning | tail -12
  echo "### ResNet-50 kernels ($(date +%T))"; timeout 60 python3 benchmarks/resnet_profile.py 2>&1 | grep -v -E "^(STAGE|USDT|ERROR:)" | tail -18
  exit 0
fi
if [ "$PART" = quant ]; then
  t 40 -w membw -r 3 --set timeout_s=30
  t 260 $L8B -v compile+fused-proj+int8-weights --set batch_size=1 --set decode_attention=$ATTN --set profile=1 -r 3 --set timeout_s=250
  t 280 $L8B -v compile+fused-proj+fp8-weights --set batch_size=1 --set decode_attention=$ATTN --set profile=1 -r 3 --set timeout_s=270
fi
summary | tee "$OUT/summary.txt"
