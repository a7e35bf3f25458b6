#!/usr/bin/env bash
# Session 7 (issue 25) on one lent nvidia-h200: `transformers serve` (transformers' own OpenAI-compatible
# server, continuous batching) driven by endpoint-serve, beside gpuarena's llm-serve on the same model shape
# and lengths: the first engine-versus-engine comparison on one GPU. One device call, <= BUDGET_S (560 s).
#   cd .serve && bash benchmarks/h200_s7_endpoint.sh                 # llama-1b; results under $OUT
#   SHAPE=llama3-8b BATCH=64 OWN_LOOP=0 bash benchmarks/h200_s7_endpoint.sh   # the 8B shape, served side only
#       (llm-serve's 8B figures at these lengths, batch 1 and 64, are stored from sessions 6-7: import
#       docs/data/h200-s6-serve-*.json and h200-s7-b64-*.json beside this call's bundle for `engines`)
#   bash benchmarks/h200_s7_endpoint.sh rehearse                     # the same steps on a CPU, tiny sizes
#   TRAFFIC=1 OWN_LOOP=0 WARM=0 BUDGET_S=470 bash benchmarks/h200_s7_endpoint.sh   # issue 41: two request
#       mixes (chat-like lengths behind a 30 % shared prefix; prompt-heavy 2,048/128), concurrency sweeps
#       inside SWEEP_S (70 s) of POINT_S (10 s) points, and a rate sweep inside RATE_SWEEP_S (80 s) of
#       RATE_POINT_S (6 s) points
# Steps (each under a time limit taken from what is left of the budget, so the call ends in time):
#  A. untimed, side by side: llm-serve's inductor caches warmed (batch 1 and BATCH, -r 1, --allow-busy);
#     a random-weights Hugging Face Llama folder of llm-serve's SHAPE built on the GPU (benchmarks/hf_model.py,
#     word-level tokenizer, no end-of-sequence token: every request generates max_tokens, as ignore_eos
#     would, which transformers serve refuses); `transformers serve FOLDER --continuous-batching` started
#     on the GPU (bf16), ready when /health answers (5.17's /v1/models lists only the hub cache, so the
#     model is named with model=FOLDER and the engine with engine=...).
#  B. timed, one at a time: endpoint-serve at concurrency 1 (a lone user, beside llm-serve batch 1), at
#     concurrency BATCH (beside llm-serve batch BATCH), then rate=sweep at the SLO (skipped when a lone
#     user's TPOT or TTFT already misses it); the server is stopped; llm-serve VARIANT at batch 1 and BATCH,
#     then the eager `seed` at both if time is left; `gpuarena engines`, results and the bundle to $OUT.
# SLO (SLO_TTFT_MS / SLO_TPOT_MS): first token within 500 ms, 40 ms a token (25 tokens/s a stream): our
# choice for an interactive 1B-class service, an assumption, not a standard; 90% of requests must meet both.
set -u
T0=$SECONDS
if [ "${1:-}" = rehearse ]; then   # a CPU rehearsal of every step (tiny shape, tiny KV cache, eager llm-serve)
  : "${DEVICE:=cpu}" "${SHAPE:=tiny}" "${PROMPT:=16}" "${OUTPUT:=8}" "${BATCH:=4}" "${VARIANT:=seed}"
  : "${CB_ARGS:=--cb-num-blocks 16 --cb-block-size 32 --cb-max-batch-tokens 256}" "${BUDGET_S:=900}"
  : "${SWEEP_N:=16}" "${SWEEP_START:=2}" "${WARM:=0}"
  export OMP_NUM_THREADS=1
fi
BUDGET=${BUDGET_S:-560}
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
PY=${PY:-python3}
SHAPE=${SHAPE:-llama-1b}; DEVICE=${DEVICE:-cuda}; B=${BATCH:-32}
PROMPT=${PROMPT:-512}; OUTPUT=${OUTPUT:-128}
TTFT=${SLO_TTFT_MS:-500}; TPOT=${SLO_TPOT_MS:-40}
VARIANT=${VARIANT:-compile+fused-proj}
SWEEP_N=${SWEEP_N:-96}; SWEEP_START=${SWEEP_START:-4}
PORT=${PORT:-8011}; URL=http://127.0.0.1:$PORT
MODEL=${MODEL_DIR:-/tmp/hf-$SHAPE}
DB=$OUT/h200-s7-endpoint.db
if [ "$DEVICE" = cpu ] && [ -z "${CB_ARGS:-}" ]; then   # CB sizes its KV cache to 90% of free memory: not on a CPU
  CB_ARGS="--cb-num-blocks 16 --cb-block-size 32 --cb-max-batch-tokens 256"
fi

left() { echo $(( BUDGET - (SECONDS - T0) )); }
# cap N: N seconds, or what is left of the budget less a reserve for the closing steps, whichever is less
cap() { local l=$(( $(left) - ${RESERVE:-30} )); if [ "$1" -lt "$l" ]; then echo "$1"; elif [ "$l" -gt 1 ]; then echo "$l"; else echo 1; fi; }
say() { echo "### [$(( SECONDS - T0 )) s] $*"; }

WHL=${WHL:-.whl}; SITE=${SITE:-/tmp/site}
if [ -z "${SKIP_WHEELS:-}" ] && ls "$WHL"/*.whl >/dev/null 2>&1; then   # fastapi, uvicorn, openai, pydantic ...
  if ! timeout 90 "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
      "$WHL"/*.whl > "$OUT/pip.log" 2>&1; then
    tail -3 "$OUT/pip.log"; mkdir -p "$SITE"
    for w in "$WHL"/*.whl; do "$PY" -m zipfile -e "$w" "$SITE"; done   # wheels are zip files
  fi
fi
export PYTHONPATH=src:$SITE${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
mkdir -p /tmp/hf-hub-empty
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_UPDATE_CHECK=1 HF_HUB_CACHE=/tmp/hf-hub-empty TOKENIZERS_PARALLELISM=false
"$PY" -m gpuarena env > "$OUT/env.json" 2>/dev/null
TF=$("$PY" -c "import transformers; print(transformers.__version__)" 2>/dev/null | tail -1)
"$PY" - <<'EOF' 2>&1 | tail -2
import importlib
print(" ".join(f"{m} {getattr(importlib.import_module(m), '__version__', '?')}" for m in (
    "torch", "transformers", "tokenizers", "fastapi", "starlette", "uvicorn", "openai", "pydantic", "anyio", "aiohttp")))
from transformers.utils.import_utils import is_serve_available
print("transformers serve available:", is_serve_available())
EOF
SERVER=; W1=; W2=
ENGINE="transformers serve $TF${CB_ARGS:+ $CB_ARGS}"   # its flags beyond the defaults name another engine
stop_server() {
  [ -n "$SERVER" ] || return 0
  kill -TERM "$SERVER" 2>/dev/null
  for _ in $(seq 30); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.5; done
  kill -KILL "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null; SERVER=
}
cleanup() { stop_server; for p in $W1 $W2; do kill -KILL "$p" 2>/dev/null; done; }
trap cleanup EXIT

# --- A. untimed: warm llm-serve's caches, build the model, start the server ------------------------------
LLM=(-w llm-serve --size full --set "shape=$SHAPE" --set "prompt_len=$PROMPT" --set "new_tokens=$OUTPUT"
     --set warmup=1 --set steps=1)
warm() { local n=$1 lim; shift; lim=$(cap 170)
  timeout $(( lim + 10 )) "$PY" -m gpuarena run -q --allow-busy --db "/tmp/warm-$n.db" "$@" -r 1 \
    --set "timeout_s=$lim" > "/tmp/warm-$n.log" 2>&1
  echo "warm $n rc=$? $(grep -E ' ok | failed| timeout' "/tmp/warm-$n.log" | tail -1)" >> "$OUT/warm.log"; }
OWN=${OWN_LOOP:-1}   # 0: the served side only
if [ "$OWN" = 1 ] && [ "${WARM:-1}" = 1 ] && [ "$VARIANT" != seed ]; then
  warm 1 "${LLM[@]}" -v "$VARIANT" --set batch_size=1 & W1=$!
  sleep 5; warm "$B" "${LLM[@]}" -v "$VARIANT" --set "batch_size=$B" & W2=$!
fi
say "model folder $MODEL ($SHAPE, on $DEVICE)"
timeout "$(cap 150)" "$PY" benchmarks/hf_model.py "$MODEL" "$SHAPE" "$DEVICE" 2>&1 | grep -vE "Writing|KernelPref|ScaleCalc" | tail -2
say "transformers serve $TF ${CB_ARGS:-}"
# shellcheck disable=SC2086  # CB_ARGS holds several flags
"$PY" -m transformers.cli.transformers serve "$MODEL" --continuous-batching ${CB_ARGS:-} --device "$DEVICE" \
  --dtype bfloat16 --host 127.0.0.1 --port "$PORT" --log-level warning > "$OUT/server.log" 2>&1 &
SERVER=$!
up=0; deadline=$(( SECONDS + $(cap 180) ))
while [ $SECONDS -lt $deadline ] && kill -0 "$SERVER" 2>/dev/null; do
  if "$PY" -c "import urllib.request as u; u.urlopen('$URL/health', timeout=2)" 2>/dev/null; then up=1; break; fi
  sleep 1
done
say "server up=$up; waiting for the cache-warming processes"
if [ -n "$W1$W2" ]; then wait $W1 $W2 2>/dev/null; fi; W1=; W2=
cat "$OUT/warm.log" 2>/dev/null
[ "$up" = 1 ] || { echo "transformers serve did not come up:"; tail -25 "$OUT/server.log"; }

# --- B. timed, one at a time ------------------------------------------------------------------------------
run() { local want=$1 lim; shift; lim=$(cap "$want"); say "gpuarena run $* (limit ${lim} s)"
  [ "$lim" -gt 5 ] || { echo "skipped: the budget is spent"; return 0; }
  timeout $(( lim + 15 )) "$PY" -m gpuarena run -q --db "$DB" "$@" --set "timeout_s=$lim" 2>&1 \
    | grep -vE '^\s*$' | tail -"${TAIL:-4}"; }
EP=(-w endpoint-serve --size full --set "base_url=$URL" --set "model=$MODEL" --set "engine=$ENGINE"
    --set "prompt_len=$PROMPT" --set "output_len=$OUTPUT" --set ignore_eos=false --set "slo_ttft_ms=$TTFT"
    --set "slo_tpot_ms=$TPOT" --set request_timeout_s=120)
if [ "$up" = 1 ] && [ "${TRAFFIC:-0}" = 1 ]; then
  # issue 41: two request mixes, each swept by concurrency (every point stored), then a rate sweep of the
  # chat mix; each sweep inside SWEEP_S (sweep_time_s) and each point inside POINT_S (duration_s)
  # budget per run: warm-up (2 requests) + the sweep (SW s) + one timed pass (PT s + requests in flight, each
  # cut at request_timeout_s 30): about 135 + 100 + 115 s, beside ~100 s of model build and server start
  SW=${SWEEP_S:-70}; PT=${POINT_S:-10}
  EPM=(-w endpoint-serve --size full --set "base_url=$URL" --set "model=$MODEL" --set "engine=$ENGINE"
       --set ignore_eos=false --set "slo_ttft_ms=$TTFT" --set "slo_tpot_ms=$TPOT" --set request_timeout_s=30
       --set warmup_requests=2 --set "duration_s=$PT" --set num_requests=256 --set sweep_max_concurrency=64 -r 1)
  # shellcheck disable=SC2206  # the mixes' --set pairs, overridable (a CPU rehearsal's tiny model has 256 positions)
  CHAT=(${CHAT_ARGS:---set length_dist=dataset --set prefix_share=0.3 --set prefix_group=16})
  # shellcheck disable=SC2206
  HEAVY=(${HEAVY_ARGS:---set prompt_len=2048 --set output_len=128})
  MIXES=${MIXES:-chat heavy rate}   # which of the three sweeps run
  case " $MIXES " in *" chat "*) run $(( SW + 70 )) "${EPM[@]}" "${CHAT[@]}" --set concurrency=sweep --set "sweep_time_s=$SW";; esac
  case " $MIXES " in *" heavy "*) run $(( SW + 50 )) "${EPM[@]}" "${HEAVY[@]}" --set concurrency=sweep --set "sweep_time_s=$SW";; esac
  # the rate sweep's points are shorter (RATE_POINT_S, 6 s) and its budget longer (RATE_SWEEP_S, 80 s): each
  # point also waits for its requests in flight (chat answers of ~250 tokens, several seconds each)
  RSW=${RATE_SWEEP_S:-80}
  case " $MIXES " in *" rate "*) ;; *) RSW=0;; esac
  [ "$RSW" -gt 0 ] && run $(( RSW + 50 )) "${EPM[@]}" "${CHAT[@]}" --set rate=sweep --set sweep_start=1 --set sweep_max=64 \
    --set sweep_refine=1 --set "sweep_time_s=$RSW" --set "duration_s=${RATE_POINT_S:-6}"
elif [ "$up" = 1 ]; then
  # the first requests ever also set up continuous batching (the KV cache): warm-up, not timed
  run 100 "${EP[@]}" --set concurrency=1 --set num_requests=5 --set warmup_requests=2 -r 2
  run 100 "${EP[@]}" --set "concurrency=$B" --set "num_requests=$(( 2 * B ))" --set "warmup_requests=$B" -r 2
  # a lone user's medians against the SLO: when they miss it, no rate can hold it, and the sweep is skipped
  lone=$("$PY" -m gpuarena results --db "$DB" -w endpoint-serve -f json 2>/dev/null | "$PY" -c "
import json, sys
rows = [r for r in json.load(sys.stdin) if r.get('status') == 'ok' and (r.get('params') or {}).get('concurrency') == 1]
e = rows[-1]['extra'] if rows else {}
ok = bool(e) and e['ttft_ms']['p50'] <= $TTFT and e['tpot_ms']['p50'] <= 0.9 * $TPOT
print(('hold' if ok else 'miss') + (f\" (lone user: TTFT p50 {e['ttft_ms']['p50']:.1f} ms, TPOT p50 {e['tpot_ms']['p50']:.2f} ms)\" if e else ''))" 2>&1 | tail -1)
  say "SLO TTFT $TTFT ms / TPOT $TPOT ms: $lone"
  if [ "${lone%% *}" = hold ]; then
    run 240 "${EP[@]}" --set rate=sweep --set "num_requests=$SWEEP_N" --set "sweep_start=$SWEEP_START" \
      --set sweep_max=512 --set sweep_refine=2 --set warmup_requests=4 -r 2
  fi
fi
tail -5 "$OUT/server.log" > "$OUT/server-tail.log"
stop_server
say "server stopped"
if [ "$OWN" = 1 ]; then
  for b in 1 "$B"; do run 150 "${LLM[@]}" -v "$VARIANT" --set "batch_size=$b" -r 3; done
  if [ "$VARIANT" != seed ]; then    # eager against eager: gpuarena's seed decode loop, if time is left
    RESERVE=25; for b in 1 "$B"; do [ "$(left)" -gt 60 ] && run 45 "${LLM[@]}" -v seed --set "batch_size=$b" -r 3; done
  fi
fi
say "closing"
"$PY" -m gpuarena engines --db "$DB" -f md > "$OUT/engines.md" 2>&1; cat "$OUT/engines.md" | cut -c1-400
"$PY" -m gpuarena results --db "$DB" -f json > "$OUT/results.json" 2>/dev/null
"$PY" -m gpuarena results --db "$DB" 2>/dev/null | tail -30
"$PY" -m gpuarena export --db "$DB" -o "$OUT/h200-s7-endpoint.json" >/dev/null 2>&1 || true
rm -f "$OUT"/*.db-shm "$OUT"/*.db-wal
say "done"
