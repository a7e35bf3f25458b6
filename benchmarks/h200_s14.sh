#!/usr/bin/env bash
# Session 14 (2026-12-02) on one lent nvidia-h200: issue 23's aot-inductor rung built through gpuarena's
# compiler shim (deploy.shared_libstdcxx_compiler), and the current llm-serve curve's batch-1 point.
#   cd .serve && bash benchmarks/h200_s14.sh a   # resnet50-infer -v aot-inductor at batch 256 and 1, and
#                                                # bf16+channels-last+aot-inductor at 256; where the first
#                                                # fails: aoti_diag.py's compile (its links logged), inspect, load
#   cd .serve && bash benchmarks/h200_s14.sh f   # the C++ toolchain's libstdc++ files, as the shim finds them
#   cd .serve && bash benchmarks/h200_s14.sh b   # llm-serve bf16 compile+fused-proj, batch 1, the compiled
#                                                # prefill (prefill=auto), and the same with gemv
# One case per process; each case has its own time limit (timeout_s) below the outer one.
SESSION=s14 PART=${1:-a}
. benchmarks/serve_calls.sh
R50="-w resnet50-infer -r 5 --set timeout_s=200"
if [ "$PART" = f ]; then   # the machine's C++ toolchain, as inductor and gpuarena's shim find it
  { which -a g++ c++; g++ --version | head -1; for n in libstdc++.so libstdc++.so.6 libstdc++.a; do g++ -print-file-name=$n; done
    ls -la "$(dirname "$(g++ -print-libgcc-file-name)")" | grep -i stdc; ls -la /usr/lib/x86_64-linux-gnu/libstdc++*
    env | grep -E '^(CXX|CC|LD_LIBRARY_PATH|CUDA_HOME)='
    python3 -c "import tempfile; from torch._inductor import config; from gpuarena.workloads import deploy
print(config.cpp.cxx, deploy.cxx(), deploy.shared_libstdcxx_compiler(tempfile.mkdtemp()))"; } 2>&1 | tee "$OUT/cxx.txt"
  exit 0
fi
if [ "$PART" = a ]; then
  t 215 $R50 -v aot-inductor --set batch_size=256
  if ! python3 -m gpuarena results --db "$DB" --format json | python3 -c "import json, sys
sys.exit(0 if any(r['status'] == 'ok' for r in json.load(sys.stdin)) else 1)"; then
    D=/tmp/aoti; rm -rf $D; mkdir -p $D
    timeout 240 python3 benchmarks/aoti_diag.py compile $D stdcxx 2>&1 | tail -5 | tee "$OUT/aoti.txt"
    python3 benchmarks/aoti_diag.py inspect $D 2>&1 | tee -a "$OUT/aoti.txt"
    timeout 90 python3 -X faulthandler benchmarks/aoti_diag.py load $D inference 2>&1 | tail -20 | tee -a "$OUT/aoti.txt"
  else
    t 215 $R50 -v aot-inductor --set batch_size=1
    [ "$(left)" -gt 150 ] && t $(left) $R50 -v bf16+channels-last+aot-inductor --set batch_size=256
  fi
fi
if [ "$PART" = b ]; then
  python3 -c "import tempfile; from gpuarena.workloads import deploy; print(open(deploy.shared_libstdcxx_compiler(tempfile.mkdtemp())).read())" \
    | tee "$OUT/shim.txt"; ls -la /opt/gcc/lib64 2>&1 | grep -i stdc | tee -a "$OUT/shim.txt"
  t 280 $L8B -v compile+fused-proj --set batch_size=1 -r 3 --set timeout_s=265
  [ "$(left)" -gt 200 ] && t $(left) $L8B -v compile+fused-proj+gemv --set batch_size=1 -r 3 --set timeout_s=$(left 12)
fi
summary | tee "$OUT/summary.txt"
