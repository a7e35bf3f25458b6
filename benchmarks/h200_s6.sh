#!/usr/bin/env bash
# Session 6 (2026-12-01) on one lent nvidia-h200: the serving engine (issue 23), in one device call.
#   bash benchmarks/h200_s6.sh all      # from the repository root; results under $OUT (the call that ran)
#   bash benchmarks/h200_s6.sh next     # not reached in session 6: batch 64 and fp8 at batch 1, warmed side
#                                       # by side first (about 8 minutes)
#   bash benchmarks/h200_s6.sh int8     # not reached either: int8 weight-only at batch 1 (about 4 minutes)
#   bash benchmarks/h200_s6.sh attn     # batch 1 with decode_attention=reduction, against the profile's
#                                       # cuDNN attention kernel (about 4 minutes)
# Phase A warms inductor's caches (FX graph cache, coordinate-descent configs, Triton kernels) with
# one untimed request of each llm-serve case, four processes side by side (compilation is CPU work;
# their GPU work overlaps, so nothing of phase A is kept), and takes the AOTInductor rung apart
# stage by stage (benchmarks/aoti_diag.py). Phase B measures the same cases one at a time: each
# process compiles again from warm caches, so its figures are those of a lone process.
# torchao (FP8) is not on the GPU box: its wheel travels in .whl/ (torchao 0.17.0, for torch 2.11).
set -u
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
DB=$OUT/h200-s6.db
python3 -m gpuarena env > "$OUT/env.json"
python3 -c "import torch, torchao, transformers; print('torch', torch.__version__, 'torchao', torchao.__version__,
'transformers', transformers.__version__)" 2>&1 | tail -1
L8B="-w llm-serve --set shape=llama3-8b --set prompt_len=512 --set new_tokens=128 --set warmup=1 --set steps=1"
PART=${1:-all}

warm() { local n=$1; shift; timeout ${WARM_S:-240} python3 -m gpuarena run -q --allow-busy --db /tmp/warm-$n.db "$@" \
    -r 1 > /tmp/warm-$n.log 2>&1; echo "warm $n rc=$? $(tail -3 /tmp/warm-$n.log | tr '\n' ' ')" >> "$OUT/warm.log"; }
if [ "$PART" = next ]; then
  WARM_S=270 warm 2 $L8B -v compile+fused-proj --set batch_size=64 &
  sleep 12; WARM_S=260 warm 3 $L8B -v compile+fused-proj+fp8-weights --set batch_size=1 &
  wait
  echo "### phase A done at $(date +%T)"
fi
if [ "$PART" = all ]; then
  warm 1 $L8B -v compile+fused-proj --set batch_size=1 &
  sleep 12; warm 2 $L8B -v compile+fused-proj --set batch_size=64 &
  sleep 12; warm 3 $L8B -v compile+fused-proj+fp8-weights --set batch_size=1 &
  sleep 12; warm 4 $L8B -v compile+fused-proj+int8-weights --set batch_size=1 &
  (   # AOTInductor: what builds the wrapper, two packages (default; no precompiled headers), load each
    A=$OUT/aoti.log; mkdir -p /tmp/a0 /tmp/a1
    { g++ --version | head -1; ldd "$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')/lib/libtorch_cpu.so" \
      | grep -E "stdc|gcc_s"; g++ -print-file-name=libstdc++.so.6; } >> "$A" 2>&1
    timeout 180 python3 benchmarks/aoti_diag.py compile /tmp/a0 > /tmp/a0.log 2>&1 &
    timeout 180 python3 benchmarks/aoti_diag.py compile /tmp/a1 nopch > /tmp/a1.log 2>&1 &
    wait; tail -2 /tmp/a0.log /tmp/a1.log >> "$A"
    python3 benchmarks/aoti_diag.py inspect /tmp/a0 >> "$A" 2>&1
    for d in a0 a1; do timeout 60 python3 benchmarks/aoti_diag.py load /tmp/$d inference >> "$A" 2>&1; echo "load $d rc=$?" >> "$A"; done
    LIB=$(g++ -print-file-name=libstdc++.so.6)
    LD_PRELOAD=$LIB timeout 60 python3 benchmarks/aoti_diag.py load /tmp/a0 inference >> "$A" 2>&1; echo "load a0 LD_PRELOAD=$LIB rc=$?" >> "$A"
  ) &
  wait
  echo "### phase A done at $(date +%T)"
fi

t() { local limit=$1; shift; echo "### $* ($(date +%T))"; timeout "$limit" python3 -m gpuarena run -q --db "$DB" "$@" 2>&1 \
      | grep -vE '^\s*$' | tail -${TAIL:-5}
      python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json" 2>/dev/null; }
if [ "$PART" = all ]; then
  t 40 -w membw -r 5
  t 150 $L8B -v compile+fused-proj --set batch_size=1 --set profile=1 -r 3
  t 150 $L8B -v compile+fused-proj --set batch_size=64 --set profile=1 -r 3
  t 120 $L8B -v compile+fused-proj+fp8-weights --set batch_size=1 --set profile=1 -r 3
  t 120 $L8B -v compile+fused-proj+int8-weights --set batch_size=1 --set profile=1 -r 3
fi
if [ "$PART" = next ]; then
  t 130 $L8B -v compile+fused-proj --set batch_size=64 --set profile=1 -r 3
  t 100 $L8B -v compile+fused-proj+fp8-weights --set batch_size=1 --set profile=1 -r 3
fi
if [ "$PART" = int8 ]; then   # one case from cold caches (about 4 minutes)
  t 300 $L8B -v compile+fused-proj+int8-weights --set batch_size=1 --set profile=1 -r 3
fi
if [ "$PART" = attn ]; then   # the decode attention as inductor's own reductions, batch 1 (about 4 minutes)
  t 300 $L8B -v compile+fused-proj --set batch_size=1 --set decode_attention=reduction --set profile=1 -r 3
fi
if [ "$PART" = aoti ]; then   # the AOTInductor rung once fixed, beside the session's figures
  t 300 -w resnet50-infer -v aot-inductor -v bf16+channels-last+aot-inductor --set batch_size=1,256 -r 5
fi
python3 -m gpuarena export --db "$DB" -o "$OUT/h200-s6.json" >/dev/null 2>&1 || true
