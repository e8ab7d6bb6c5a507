#!/usr/bin/env bash
# Every IVF GPU test (the CPU-reference comparisons) in one device call: first the whole
# IVF bundle is linked for the GPU in parallel into the tests' disk cache (`ltokit warmup`,
# one link a core), then the tests run against that warm cache instead of linking their
# ~600 plans one search at a time. Run from the repository root on the GPU machine with
# gpu-run/ carried (scripts/gpu-build.sh: the ltokit binary, the test binaries, ivf.ltkb).
# Writes OUT_DIR/{warmup.json,tests.txt}.
#
# usage: bash scripts/gpu-validate.sh OUT_DIR [TEST_FILTER ...]
set -u
out=${1:?usage: gpu-validate.sh OUT_DIR [TEST_FILTER ...]}
shift
mkdir -p "$out"
# The tests' cache: std::env::temp_dir()/ltokit-ivf-gpu-test-cache (tests/gpu.rs, engine()).
cache="${TMPDIR:-/tmp}/ltokit-ivf-gpu-test-cache"
SECONDS=0
gpu-run/bin/ltokit warmup --bundle gpu-run/ivf.ltkb --arch native --json --cache-dir "$cache" \
  > "$out/warmup.json" 2> "$out/warmup.err"
echo "warm-up: ${SECONDS} s" >&2
gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture "$@" > "$out/tests.txt" 2>&1
echo "tests: ${SECONDS} s" >&2
grep -E "^test |test result|panicked|checked|match|device-resident|named|switched" "$out/tests.txt"
