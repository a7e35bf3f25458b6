#!/usr/bin/env bash
# The H200 measurements of session 1, in the two device calls they were made in.
#   bash benchmarks/h200_calls.sh 2   # ceilings, the goals' best recipes, the ResNet-50 push
#   bash benchmarks/h200_calls.sh 3   # article 000's matrix (BERT, SD), DDP N=1 baselines
# Each part fits one 10-minute device call; results accumulate in $OUT/h200.db.
set -u
PART=${1:?part 2 or 3}
. "$(dirname "$0")/h200_common.sh"
if [ "$PART" = 2 ]; then
  TAIL=16 t 170 $RUN --suite micro
  t 240 $RUN -w bert-large-infer --variant fp16+sdpa --variant bf16+sdpa --variant fp16+sdpa+compile \
      --set batch_size=64 --set warmup=3 --set steps=5 --repeats 5
  t 150 $RUN -w bert-large-train --variant amp-bf16+sdpa+fused-adamw --variant amp-bf16+sdpa+fused-adamw+compile \
      --set batch_size=32 --set warmup=3 --set steps=3 --repeats 5
  t 150 $RUN -w sd15-generate --variant sdpa+channels-last+fused-qkv --variant sdpa+channels-last+fused-qkv+compile \
      --set warmup=1 --repeats 5
  t 100 $RUN -w resnet50-train --variant amp-bf16+channels-last+compile+cudnn-benchmark \
      --set batch_size=1024 --set loss=cross-entropy --repeats 5
fi
if [ "$PART" = 3 ]; then
  # seed-a100-a800 without its ResNet-50 rows (those ran in part 1 through seed-resnet50, same cases)
  python3 - <<'PY'
import yaml
s = yaml.safe_load(open("src/gpuarena/spec/suites/seed-a100-a800.yaml"))
s["entries"] = [e for e in s["entries"] if e["workload"] != "resnet50-train"]
s["name"] = "seed-a100-a800"
yaml.safe_dump(s, open("/tmp/seed-a100-a800-nors.yaml", "w"))
PY
  TAIL=20 t 270 $RUN --suite /tmp/seed-a100-a800-nors.yaml
  TAIL=20 t 240 $RUN --suite ddp-single
fi
python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json"
