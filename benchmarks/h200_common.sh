# Sourced by the H200 call scripts: environment, the database carried between calls, helpers.
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
DB=$OUT/h200.db
# results accumulate across calls: the previous call's database travels in .gpu/ (ignored by git)
[ -f .gpu/h200.db ] && cp .gpu/h200.db "$DB" && chmod u+w "$DB"
RUN="python3 -m gpuarena run -q --db $DB"
# t LIMIT CMD...: run CMD under a time limit (the device call has one), print its last lines
t() { local limit=$1; shift; echo "### $*"; timeout "$limit" "$@" 2>&1 | grep -vE '^\s*$' | tail -${TAIL:-12}; }
python3 -m gpuarena env > "$OUT/env.json"
