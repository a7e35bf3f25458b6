# Sourced by the H200 call scripts (h200_s8.sh, h200_s9.sh, h200_s10.sh) after they set SESSION (s8, ...) and
# PART (the call's part): the output folder ($OUT), the carried wheels (wheels.sh), the environment, the call's
# database ($DB, exported to $OUT/$NAME.json), the machine's fingerprint ($OUT/env.json), llama3-8b's llm-serve
# arguments ($L8B), and
#   t LIMIT ARGS...  one `gpuarena run -q --db $DB ARGS` under an outer time limit, its status lines
#                    printed, the database exported to $OUT/$NAME.json after each (a call cut short keeps them)
#   left [MARGIN]    seconds left of the call's BUDGET_S (default 580), less MARGIN
#   summary          every stored result a line: throughput, llm-serve's decode figures and its kernel profile
set -u
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
. benchmarks/wheels.sh
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 COLUMNS=200
NAME=h200-$SESSION-$PART
DB=$OUT/$NAME.db
python3 -m gpuarena env > "$OUT/env.json"
L8B="-w llm-serve --set shape=llama3-8b --set prompt_len=512 --set new_tokens=128 --set warmup=1 --set steps=1"
END=$(( $(date +%s) + ${BUDGET_S:-580} ))
left() { echo $(( END - $(date +%s) - ${1:-0} )); }
t() { local limit=$1; shift; echo "### $* ($(date +%T))"; timeout "$limit" python3 -m gpuarena run -q --db "$DB" "$@" 2>&1 \
      | grep -E '^\s+(ok|skipped|error|failed|timeout|crashed)|^run |^warning|rror' | tail -${TAIL:-8}
      python3 -m gpuarena export --db "$DB" -o "$OUT/$NAME.json" >/dev/null 2>&1; }
summary() {
  python3 -m gpuarena results --db "$DB" --format json > "$OUT/results.json" 2>/dev/null
  python3 - "$OUT/results.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    e, p, th = r.get("extra") or {}, r.get("params") or {}, r.get("throughput") or {}
    thr = f"{th['median']:,.1f} {th['unit']} (CI {th['ci95_low']:,.1f}-{th['ci95_high']:,.1f})" if th else "-"
    keys = ("decode_tokens_per_s", "tpot_ms_median", "tpot_ms_p99", "ttft_ms", "decode_bandwidth_gbs", "prefill_tflops",
            "weights_bytes", "quantization", "cudagraph_skips")
    ex = " ".join(f"{k}={e[k]}" for k in keys if e.get(k) is not None)
    prof = e.get("decode_profile") or {}
    print(f"{r['workload']} bs{p.get('batch_size')} {r['variant']} attn={e.get('decode_attention') or p.get('decode_attention')} [{r['status']}] {thr}"
          f" {ex} {(r.get('error') or '')[:300]}")
    if prof:
        print("    profile:", json.dumps({k: v for k, v in prof.items() if k != "kernels"})[:300])
    for k in (prof.get("kernels") or [])[:8]:
        print("    ", json.dumps(k)[:240])
PY
}
