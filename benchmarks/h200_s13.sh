#!/usr/bin/env bash
# Session 13 (2026-12-02) on one lent nvidia-h200: issue 23's batch-1 decode with llm-serve version 9
# (`gemv` folds the QKV projection's RMSNorm into gpuarena's kernel), the batch-1 prefill's profile, the
# curve's batch-256 point.
#   cd .serve && bash benchmarks/h200_s13.sh a   # llm-serve batch 1: bf16+gemv, fp8+gemv, bf16 (eager
#                                                # prefill: the decode is the question), profiled
#   cd .serve && bash benchmarks/h200_s13.sh b   # benchmarks/gemv.py on the narrow matrices (the folded
#                                                # norm, bf16's tiles); benchmarks/prefill_b1.py --autotune
#   cd .serve && bash benchmarks/h200_s13.sh c   # the curve's batch-256 point
#   cd .serve && bash benchmarks/h200_s13.sh d   # batch 1, bf16+gemv with prefill=graph (the CUDA-graphed
#                                                # prefill); the energy rule (measure/energy.py) on ResNet-50
#                                                # batch 1 over a 10-step and a 3,000-step window
#   cd .serve && bash benchmarks/h200_s13.sh e   # written for the next session, not run: the AOTI package's
#                                                # wrapper linked with libstdc++ first (aoti_diag.py stdcxx)
# One case per process; each case has its own time limit (timeout_s) below the outer one.  A cold llama3-8b
# case needs 250-280 s of outer limit (session 12 lost a call with 150-170 s).
SESSION=s13 PART=${1:-a}
. benchmarks/serve_calls.sh
B1="--set batch_size=1 --set prefill=eager --set profile=1 -r 3"
if [ "$PART" = a ]; then
  t 275 $L8B -v compile+fused-proj+gemv $B1 --set timeout_s=262
  t 275 $L8B -v compile+fused-proj+fp8-weights+gemv $B1 --set timeout_s=262
  [ "$(left)" -gt 120 ] && t $(left) $L8B -v compile+fused-proj $B1 --set timeout_s=$(left 12)
fi
if [ "$PART" = b ]; then
  timeout 200 python3 benchmarks/gemv.py --only wqkv,wo,w2 --tiles 1,512,4,3/1,1024,4,3/2,1024,4,1/4,512,4,3/8,1024,4,1 \
    2>&1 | grep -v Warning | tee "$OUT/gemv.txt"
  timeout $(left 5) python3 benchmarks/prefill_b1.py --autotune 2>&1 | grep -v Warning | tee "$OUT/prefill.txt"
fi
if [ "$PART" = c ]; then
  t $(left) $L8B -v compile+fused-proj --set batch_size=256 -r 3 --set timeout_s=$(left 12)
fi
if [ "$PART" = d ]; then
  t 280 $L8B -v compile+fused-proj+gemv --set batch_size=1 --set prefill=graph -r 3 --set timeout_s=265
  for steps in 10 3000; do
    t 100 -w resnet50-infer -v bf16+channels-last+cudnn-fused+cuda-graph --set batch_size=1 --set steps=$steps -r 2 \
      --set timeout_s=90
  done
  python3 -m gpuarena results --db "$DB" --format json | python3 -c "
import json, sys
for r in json.load(sys.stdin):
    e, th = r['extra'].get('energy') or {}, r.get('throughput') or {}
    T = e.get('window_s')
    print(r['workload'], r['params'].get('steps'), r['status'], r.get('energy_source'), 'step_s', e.get('counter_step_s'),
          'window_s', T, 'counter_W', e.get('counter_j') and T and e['counter_j'] / T,
          'sampled_W', e.get('sampled_j') and T and e['sampled_j'] / T, 'power_w_max', r.get('power_w_max'),
          'J/item x rate', (r.get('energy_j_per_item') or 0) * (th.get('median') or 0), e.get('counter_not_used'))
" | tee "$OUT/energy.txt"
fi
if [ "$PART" = e ]; then
  D=/tmp/aoti; rm -rf $D; mkdir -p $D
  timeout 300 python3 benchmarks/aoti_diag.py compile $D bf16 stdcxx 2>&1 | tail -5 | tee "$OUT/aoti.txt"
  python3 benchmarks/aoti_diag.py inspect $D 2>&1 | tee -a "$OUT/aoti.txt"
  timeout 120 python3 -X faulthandler benchmarks/aoti_diag.py load $D inference 2>&1 | tail -20 | tee -a "$OUT/aoti.txt"
fi
summary | tee "$OUT/summary.txt"
