#!/usr/bin/env bash
# Session 7 (2026-12-01) on one lent nvidia-h200: the low-precision inference rungs (issue 23), one device call.
#   bash benchmarks/h200_s7_rungs.sh          # from the repository root, carrying .serve (its .whl/ wheels);
#                                             # results and a bundle under $OUT; about 6.5-7 minutes
#   bash benchmarks/h200_s7_rungs.sh aoti     # the AOTInductor rung alone (refused with its cause, or it runs)
# Phase A warms inductor's caches (FX graph, AOTAutograd, Triton kernels) with every compiled case at
# once, each in its own process on its own scratch database (compilation is CPU work; nothing of phase A
# is kept). Phase B measures the cases one at a time, one gpuarena run per ladder so each run holds its
# seed: each process compiles again from warm caches, so its figures are those of a lone process.
# torchao and pydantic are not on the GPU box: their wheels travel in .serve/.whl (torchao 0.17.0).
set -u
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
. benchmarks/wheels.sh
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 COLUMNS=200
DB=$OUT/h200-s7-rungs.db
python3 -m gpuarena env > "$OUT/env.json"
python3 -c "import torch, torchao, transformers; print('torch', torch.__version__, 'torchao', torchao.__version__,
'transformers', transformers.__version__, 'capability', torch.cuda.get_device_capability())" 2>&1 | tail -1
python3 -c "import torch_tensorrt" 2>&1 | tail -1    # expected: No module named 'torch_tensorrt'
PART=${1:-all}

CL=bf16+channels-last
R256="-w resnet50-infer --set batch_size=256"
R1="-w resnet50-infer --set batch_size=1 --set compile_mode=reduce-overhead"
BERT="-w bert-large-infer --set warmup=2 --set steps=5"
RESNET_RUNGS="$CL+compile $CL+cudnn-benchmark+compile $CL+cudnn-benchmark+compile+int8-dynamic
  $CL+cudnn-benchmark+compile+fp8-dynamic"
BERT_RUNGS="bf16+sdpa+compile bf16+sdpa+compile+int8-dynamic bf16+sdpa+compile+fp8-dynamic"

warm() { local n=$1; shift; timeout ${WARM_S:-200} python3 -m gpuarena run -q --allow-busy --db /tmp/warm-$n.db "$@" \
    --set warmup=1 --set steps=1 -r 1 > /tmp/warm-$n.log 2>&1
    echo "warm $n rc=$? $(tail -2 /tmp/warm-$n.log | tr '\n' ' ')" >> "$OUT/warm.log"; }
t() { local limit=$1; shift; echo "### $* ($(date +%T))"; timeout "$limit" python3 -m gpuarena run -q --db "$DB" "$@" 2>&1 \
      | grep -E '^\s+(ok|skipped|error|failed|timeout)|^run |^warning|rror' | tail -${TAIL:-12}; }
summary() {
  python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json" 2>/dev/null
  python3 - "$OUT/results.json" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1])):
    e, p = r.get("extra") or {}, r.get("params") or {}
    a = e.get("accuracy") or {}
    acc = (f" top1 {a['top1_agreement']:.3f} centred {a['top1_agreement_centered']:.3f}" if "top1_agreement" in a else "") + \
          (f" rel_rms {a['rel_rms_error']:.2e} cos_min {a['cosine_min']:.4f}" if a else "")
    th = r.get("throughput") or {}
    thr = f"{th['median']:,.0f} {th['unit']} (CI {th['ci95_low']:,.0f}-{th['ci95_high']:,.0f})" if th else "-"
    print(f"{r['workload']} bs{p.get('batch_size')} {r['variant']} [{r['status']}] {thr} prec={r.get('precision')}"
          f" tflops={r.get('tflops') and round(r['tflops'])} compile_s={r.get('compile_s') and round(r['compile_s'], 1)}{acc} {(r.get('error') or '')[:160]}")
EOF
}

save() { summary > "$OUT/summary.txt"; python3 -m gpuarena export --db "$DB" -o "$OUT/h200-s7-rungs.json" >/dev/null 2>&1; }

if [ "$PART" = all ]; then   # about 6.5-7 minutes expected; the time limits below cap it near 9.5
  i=0   # $CL+compile compiles the graph $CL+cudnn-benchmark+compile does: warmed once
  for v in $RESNET_RUNGS; do [ "$v" = $CL+compile ] && continue; i=$((i+1)); WARM_S=170 warm r$i $R256 -v "$v" & sleep 2
  done
  i=0
  for v in $BERT_RUNGS; do i=$((i+1)); WARM_S=170 warm e$i $BERT -v "$v" & sleep 2; done
  WARM_S=150 warm b1 $R1 -v $CL+compile & sleep 2
  WARM_S=150 warm b2 $R1 -v $CL+cudnn-benchmark+compile+fp8-dynamic &
  wait
  echo "### phase A done at $(date +%T)"; cat "$OUT/warm.log"

  # ResNet-50 batch 256: seed (the ladder's base), the session-5 best, cuDNN autotuning, the two dynamic rungs,
  # batch norms folded and ReLU/residual add in cuDNN's fused epilogue (eager: nothing to warm);
  # TensorRT is refused in a second ("torch_tensorrt is not installed: pip install torch-tensorrt ...").
  V=""; for v in seed $RESNET_RUNGS $CL+cudnn-benchmark+cudnn-fused tensorrt; do V="$V -v $v"; done
  t 170 $R256 $V -r 5 --set timeout_s=110; save
  # BERT-Large batch 64 x 512: seed, the session-3 best (bf16+sdpa+compile), the two dynamic rungs
  V=""; for v in seed $BERT_RUNGS; do V="$V -v $v"; done
  t 140 $BERT $V -r 4 --set timeout_s=90; save
  # ResNet-50 batch 1 (latency), CUDA graphs: the bf16 recipe and the fp8 rung compiled (reduce-overhead); the
  # fused model eager and captured as one CUDA graph by hand
  V=""; for v in $CL+compile $CL+cudnn-benchmark+compile+fp8-dynamic $CL+cudnn-benchmark+cudnn-fused \
    $CL+cudnn-benchmark+cudnn-fused+cuda-graph; do V="$V -v $v"; done
  t 80 $R1 $V -r 5 --set timeout_s=50
fi
if [ "$PART" = aoti ]; then
  t 300 $R256 -v aot-inductor -v $CL+aot-inductor -r 5
fi
save; cat "$OUT/summary.txt"
