#!/usr/bin/env bash
# Runs every GPU test and GPU-side check on the GPU machine, from the repository root,
# with gpu-run/ built by scripts/gpu-build.sh. Logs are packed into $OUT/gpu-logs.tgz
# (default OUT=/tmp/ltokit-out); a summary table is printed last.
# MAKE_FIXTURES=1 also rebuilds the nvcc fixtures and their cuobjdump listings.
set -uo pipefail
OUT=${OUT:-/tmp/ltokit-out}
logs="$OUT/logs"
mkdir -p "$logs"
bin=gpu-run/bin
export LTOKIT_TEST_FIXTURES=$PWD/tests/fixtures
export RUST_BACKTRACE=1
declare -a summary
step() { # step NAME LOGFILE COMMAND...
  local name=$1 log=$2; shift 2
  local t0=$(date +%s%N)
  "$@" > "$logs/$log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  summary+=("$(printf '%-40s %-4s %7d ms  %s' "$name" "$([[ $rc == 0 ]] && echo PASS || echo FAIL)" "$ms" "$log")")
  return $rc
}
nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv > "$logs/machine.txt" 2>&1
/usr/local/cuda/bin/nvcc --version >> "$logs/machine.txt" 2>&1

step "ltokit doctor" doctor.txt $bin/ltokit doctor
step "ltokit demo (IVF, first run)" demo.txt $bin/ltokit demo --out-dir /tmp/ltokit-demo
step "GPU tests (--ignored)" gpu-tests.txt $bin/test-ltokit-gpu-test --ignored --test-threads=1 --nocapture
step "warm-up of all 1100 IVF plans (16 cores)" ivf-warmup.txt $bin/ltokit warmup --bundle gpu-run/ivf.ltkb --arch native --json --cache-dir /tmp/ltokit-ivf-gpu-test-cache
step "IVF GPU tests (--ignored)" ivf-gpu-tests.txt $bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture
step "adopter example (own stream)" adopter.txt env LTOKIT_CACHE_DIR=/tmp/ltokit-adopter-cache $bin/ltokit-adopter-example
step "pipeline tests" pipeline-tests.txt $bin/test-ltokit-pipeline-test
for t in $bin/test-ltokit-ltokit-lib; do step "unit tests" unit-tests.txt $t; done
if [[ "${MAKE_FIXTURES:-0}" == 1 ]]; then
  step "make fixtures (nvcc)" fixtures.txt bash scripts/make-fixtures.sh "$logs/fx"
  cp "$logs/fx/small_sm90.cubin" tests/fixtures/ 2>/dev/null
  bash scripts/list-cuobjdump.sh tests/fixtures > "$logs/cuobjdump_listings.txt"
  cp "$logs/cuobjdump_listings.txt" tests/fixtures/
fi
step "fixture tests (vs cuobjdump)" fixture-tests.txt $bin/test-ltokit-fatbin_fixtures-test
step "ltokit demo, second run (cache)" demo2.txt $bin/ltokit demo --out-dir /tmp/ltokit-demo
step "cache benchmarks (fresh processes)" cache-bench.txt bash scripts/gpu-bench-cache.sh "$logs/cache-bench"
if [[ "${IVF_BENCH:-0}" == 1 ]]; then
  step "IVF benchmarks" ivf-bench.txt bash scripts/gpu-bench-ivf.sh "$logs/ivf-bench"
fi
for lib in ${INVENTORY_LIBS:-/usr/local/cuda/lib64/libcurand.so.10}; do
  step "inventory vs cuobjdump: $(basename "$lib")" "inventory-$(basename "$lib").txt" \
    python3 scripts/compare_cuobjdump.py "$bin/ltokit" "$lib"
done
echo
echo "== ltokit GPU run on $(head -2 "$logs/machine.txt" | tail -1)"
printf '%s\n' "${summary[@]}"
grep -h -E "n=|max rel|checked|recall@10|own stream" "$logs/gpu-tests.txt" "$logs/ivf-gpu-tests.txt" 2>/dev/null | head -20
cat "$logs/adopter.txt" 2>/dev/null
cat "$logs/cache-bench/summary.md" 2>/dev/null
cat "$logs/demo.txt" "$logs/demo2.txt" 2>/dev/null | grep -E "recall|kernels this run|built"
cat "$logs/ivf-bench/summary.txt" 2>/dev/null
tar czf "$OUT/gpu-logs.tgz" -C "$OUT" logs && rm -rf "$logs"
