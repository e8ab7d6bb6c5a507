#!/usr/bin/env bash
# Session 43, call 1: A/B of cand (main), gsho, ts48, cis, krn, rbs and ph2 (cand with --phases always) on five sets, two rounds; ncu
# timelines of cand and ts48 on lowdim-i8 × 10 and of cand and cis on images × 2; with TESTS=1 gsho's
# GPU tests after warming its cache.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s43
L=${LIMIT:-575}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
bench_arg_build ph2 cand --phases always
SETS="lowdim-i8 images lowdim-f16 lowdim wide-i8" ROUNDS=${ROUNDS:-2} ab_against ${AB:-260} ${BUILDS:-cand gsho ts48 cis krn rbs ph2}
timeline ts48 lowdim-i8 1024 10 $((SECONDS + 30))
timeline cand lowdim-i8 1024 10 $((SECONDS + 30))
timeline cis images 256 2 $((SECONDS + 30))
timeline cand images 256 2 $((SECONDS + 30))
if [ "${TESTS:-1}" = 1 ]; then
  warm_test_cache gsho 80
  SINCE=$SECONDS MIN_LEFT=20 bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-gsho "$W" "$L" \
    list_major_bounds_seeded an_index_built_on_the_device device_resident list_major_tiles
fi
cat "$W/gpu.txt"
runner_finish
