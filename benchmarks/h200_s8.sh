#!/usr/bin/env bash
# Session 8 (2026-12-01) on one lent nvidia-h200: issue 23's unmeasured rungs, one case per process.
#   cd .serve && bash benchmarks/h200_s8.sh quant   # ResNet-50 cuDNN-fused + CUDA graph (batch 256 and 1),
#                                                   # llm-serve int8 and fp8 weights at batch 1 (about 9 min)
#   cd .serve && DUMP_S=390 bash benchmarks/h200_s8.sh int8   # what ran third: the ResNet-50 CUDA-graph rows
#                                                   # again and int8 alone (stack dumped if it hangs)
#   cd .serve && bash benchmarks/h200_s8.sh next    # not reached: llm-serve v3 (eager prefill over quantised
#                                                   # weights) int8 then fp8 at batch 1, profiled, one process each
# Every llm-serve case compiles from cold caches in its own process (side-by-side cold compiles of
# llama3-8b ran past their limits in session 7); the first request of a process holds compilation
# and is left out of the figures.  torchao and pydantic travel as wheels in .whl/.
SESSION=s8 PART=${1:-quant}
CL=bf16+channels-last+cudnn-benchmark+cudnn-fused
. benchmarks/serve_calls.sh
if [ "$PART" = quant ]; then
  t 70 -w resnet50-infer --set batch_size=256 -v $CL -v $CL+cuda-graph -r 5 --set timeout_s=30
  t 50 -w resnet50-infer --set batch_size=1 -v $CL+cuda-graph -r 5 --set timeout_s=20
  t 220 $L8B -v compile+fused-proj+int8-weights --set batch_size=1 --set profile=1 -r 3
  t 260 $L8B -v compile+fused-proj+fp8-weights --set batch_size=1 --set profile=1 -r 3
fi
if [ "$PART" = int8 ]; then   # what the quant call could not finish: int8 alone, its stack dumped if it hangs
  t 70 -w resnet50-infer --set batch_size=256 -v $CL -v $CL+cuda-graph -r 5 --set timeout_s=30
  t 40 -w resnet50-infer --set batch_size=1 -v $CL+cuda-graph -r 5 --set timeout_s=20
  # after ${DUMP_S:-400} s a still-running case gets SIGABRT: faulthandler writes every thread's stack
  # to its stderr, which the runner stores with the crashed case
  ( sleep ${DUMP_S:-400}; pkill -ABRT -f gpuarena.runner.child && echo "### SIGABRT sent at $(date +%T)" ) &
  W=$!
  TAIL=30 t $((${DUMP_S:-400} + 40)) $L8B -v compile+fused-proj+int8-weights --set batch_size=1 -r 2
  kill $W 2>/dev/null
  python3 -m gpuarena results --db "$DB" --format json | python3 -c "import json,sys
for r in json.load(sys.stdin):
    if r['status'] != 'ok': print(r['variant'], r['status'], (r.get('error') or '')[-3000:])"
fi
if [ "$PART" = next ]; then   # each case stored as a timeout (with its stderr) if it runs past its own limit
  t 280 $L8B -v compile+fused-proj+int8-weights --set batch_size=1 --set profile=1 -r 3 --set timeout_s=260
  t 300 $L8B -v compile+fused-proj+fp8-weights --set batch_size=1 --set profile=1 -r 3 --set timeout_s=280
fi
summary | tee "$OUT/summary.txt"
