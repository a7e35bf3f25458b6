#!/usr/bin/env bash
# The acceptance test on one lent H200 (issue 42): doctor's quick level, a 3-minute burn-in, the GPU-only
# acceptance tests.  Run from the repository root on the device machine, results under $OUT:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && PYTHONPATH=/tmp/site bash benchmarks/h200_doctor.sh
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 COLUMNS=200
python3 -m gpuarena env > "$OUT/env.json"
S=$(date +%s); python3 -m gpuarena doctor --level quick --db "$OUT/doctor.db" --bundle "$OUT/doctor-quick.json" \
    > "$OUT/doctor-quick.txt" 2>&1; echo "exit=$? wall_s=$(( $(date +%s) - S ))" | tee -a "$OUT/doctor-quick.txt"
cat "$OUT/doctor-quick.txt"
S=$(date +%s); python3 -m gpuarena doctor --level burn-in --minutes "${MINUTES:-3}" --db "$OUT/doctor.db" \
    --bundle "$OUT/doctor-burnin.json" > "$OUT/doctor-burnin.txt" 2>&1
echo "exit=$? wall_s=$(( $(date +%s) - S ))" | tee -a "$OUT/doctor-burnin.txt"
tail -40 "$OUT/doctor-burnin.txt"
python3 - "$OUT/doctor-burnin.json" <<'PY' | tee "$OUT/burnin-summary.json"
import json, sys
b = json.load(open(sys.argv[1]))
keys = ('burst_tflops', 'sustained_tflops', 'sustained_to_burst', 'first_throttle_s', 'throttle_first_seen_s',
        'sustained_sm_clock_mhz', 'sustained_power_w', 'temp_c_max', 'sustained_copy_gbs')
print(json.dumps({d: {k: g['burn_in'].get(k) for k in keys}
                  for d, g in b['doctor']['acceptance']['gpus'].items()}, indent=1))
PY
timeout 300 python3 -m pytest -q -p no:xdist -p no:cacheprovider tests/runner/test_gpu_acceptance.py 2>&1 | tail -5
