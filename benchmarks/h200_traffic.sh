#!/usr/bin/env bash
# Issue 41 on one lent nvidia-h200, the own-loop side and a health check first:
#   bash benchmarks/h200_traffic.sh      # results under $OUT, one call, <= BUDGET_S (540 s)
#  1. `gpuarena doctor --level quick` (every runner path on the GPU: the runner loads each workload's body
#     from its spec);
#  2. gpuarena's own llm-serve (eager `seed` decode loop) on llama-1b at the two request mixes that
#     `TRAFFIC=1 bash benchmarks/h200_s7_endpoint.sh` sends to `transformers serve`: prompt-heavy 2,048/128,
#     and the chat table's means (215 words in, 267 out: prompt 220, 250 new tokens), at batch 1, 8 and 32
#     (beside concurrency 1, 8 and 32), three repeats each.
set -u
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
. benchmarks/wheels.sh
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 COLUMNS=200
END=$(( $(date +%s) + ${BUDGET_S:-540} ))
left() { echo $(( END - $(date +%s) - ${1:-0} )); }
python3 -m gpuarena env > "$OUT/env.json"
S=$(date +%s); timeout 200 python3 -m gpuarena doctor --level quick --db "$OUT/doctor.db" \
  --bundle "$OUT/doctor-quick.json" > "$OUT/doctor-quick.txt" 2>&1
echo "exit=$? wall_s=$(( $(date +%s) - S ))" | tee -a "$OUT/doctor-quick.txt"; tail -30 "$OUT/doctor-quick.txt"
DB=$OUT/traffic-own.db
own() { local lim; lim=$(left 15); [ "$lim" -gt 30 ] || { echo "skipped $*: budget spent"; return; }
  echo "### llm-serve $* ($(date +%T), limit $lim s)"
  timeout "$lim" python3 -m gpuarena run -q --db "$DB" -w llm-serve --size full --set shape=llama-1b -v seed \
    --set warmup=1 --set steps=1 --set batch_size=1,8,32 -r 3 --set timeout_s=120 "$@" 2>&1 \
    | grep -E 'status|rror' | tail -8; }
own --set prompt_len=2048 --set new_tokens=128
own --set prompt_len=220 --set new_tokens=250
python3 -m gpuarena results --db "$DB" 2>/dev/null | tail -12
python3 -m gpuarena export --db "$DB" -o "$OUT/h200-traffic-own.json" >/dev/null 2>&1
python3 -m gpuarena export --db "$OUT/doctor.db" -o "$OUT/h200-doctor-quick.json" >/dev/null 2>&1
rm -f "$OUT"/*.db-shm "$OUT"/*.db-wal
