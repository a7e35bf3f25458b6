#!/usr/bin/env bash
# Issue 24 item 6 (session 9, helper zygote): case children forked from the case server on a GPU.
#   bash benchmarks/gpu_child_start.sh          (about a minute on one H200; OUT=./gpu-out by default)
#   SIZE=tiny CAP_MB=256 bash benchmarks/gpu_child_start.sh   (the same at tiny sizes: a dry run on a CPU)
# 1. What importing the server's modules does to a process (it must stay one thread, CUDA not
#    initialised, NVML not loaded: runner/zygote_server.py's unsafe() says why not, or None).
# 2. One suite, run once forked from the server (the default) and once with
#    GPUARENA_CHILD_START=spawn: matmul (8192^3 bf16), ResNet-50 inference at batch 64 and 128
#    (the second ResNet case is forked after the server imported torchvision), batch 8192 under a
#    8 GiB memory cap (oom) and a matmul past its 5 s limit (timeout).  Prints each stored row's
#    status and throughput side by side, each run's wall time, and whether a `gpuarena-case`
#    process (a server-forked child) was seen.  Expect the same statuses and throughputs within noise.
set -u
OUT=${OUT:-./gpu-out}; mkdir -p "$OUT"
. benchmarks/wheels.sh
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 COLUMNS=200
python3 - <<'PY'
import os, time
t = time.time()
from gpuarena.runner.zygote import PRELOAD
from gpuarena.runner.zygote_server import _import, unsafe
mods = PRELOAD + ("torchvision", "gpuarena.workloads.resnet50_infer", "gpuarena.workloads.micro")
_import(mods)
import sys
print("### not importable:", [m for m in mods if m not in sys.modules])
maps = open("/proc/self/maps").read()
print(f"### server imports: {time.time() - t:.1f} s; unsafe: {unsafe()}; threads {len(os.listdir('/proc/self/task'))};"
      f" libcuda mapped: {'libcuda.so' in maps}; libnvidia-ml mapped: {'libnvidia-ml.so' in maps}")
PY
cat > "$OUT/child-start.yaml" <<YAML
name: child-start
method: {repeats: 3${SIZE:+, size: $SIZE}}
entries:
  - workload: matmul
  - workload: resnet50-infer
    grid: {batch_size: [64, 128]}
  - workload: resnet50-infer
    params: {batch_size: 8192}
    method: {repeats: 1}
  - workload: matmul
    params: {sets: 2}
    method: {steps: 100000, repeats: 100, timeout_s: 5}
YAML
for mode in server spawn; do
  rm -f "$OUT/cs-$mode.db"*
  t0=$(date +%s%N)
  GPUARENA_CHILD_START=$mode GPUARENA_MEMORY_CAP_MB=${CAP_MB:-8192} \
    python3 -m gpuarena run -q --db "$OUT/cs-$mode.db" --suite "$OUT/child-start.yaml" > "$OUT/cs-$mode.log" 2>&1 &
  rp=$!; ( sleep 80; kill $rp 2>/dev/null ) & guard=$!
  seen=no
  while kill -0 $rp 2>/dev/null; do   # a server-forked child of this runner: named gpuarena-case, its stderr in our folder
    for p in $(pgrep -x gpuarena-case); do readlink /proc/$p/fd/2 | grep -q "gpuarena-$rp-" && seen=yes; done
    sleep 0.5
  done
  wait $rp; rc=$?
  kill $guard 2>/dev/null
  echo "### $mode: exit $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms; server-forked child seen: $seen;" \
       "$(grep -c 'case server is unavailable' "$OUT/cs-$mode.log") fallback warnings"
done
python3 - "$OUT" <<'PY'
import sys
from gpuarena.store.db import Store
rows = {m: Store(f"{sys.argv[1]}/cs-{m}.db").results() for m in ("server", "spawn")}
for a, b in zip(rows["server"], rows["spawn"]):
    def say(r):
        t = r.get("throughput_median")
        return f"[{r['status']}] " + (f"{t:,.1f} {r['unit']} first step {r['extra'].get('first_step_s', 0):.2f} s" if t
                                      else (r.get("error") or "")[:90])
    print(f"{a['workload']} {a['params'].get('batch_size', '')}\n  server {say(a)}\n  spawn  {say(b)}")
PY
