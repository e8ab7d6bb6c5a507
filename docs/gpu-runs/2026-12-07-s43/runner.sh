#!/usr/bin/env bash
# Session 43, call 1: A/B of cand (main), gsho, ts48, kr, krn, rb, rbs and ph2 (session 39's 3-kr.sh builds) on five sets, two rounds; ncu
# timelines of cand and ts48 on lowdim-i8 × 10; then gsho's GPU tests after warming its cache.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s43
L=${LIMIT:-575}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
bench_arg_build ph2 cand --phases always
SETS="lowdim-i8 images lowdim-f16 lowdim wide-i8" ROUNDS=${ROUNDS:-2} ab_against ${AB:-220} ${BUILDS:-cand gsho ts48 krn rbs ph2}
timeline ts48 lowdim-i8 1024 10 $((SECONDS + 30))
timeline cand lowdim-i8 1024 10 $((SECONDS + 30))
if [ "${TESTS:-1}" = 1 ]; then
  warm_test_cache gsho 80
  SINCE=$SECONDS MIN_LEFT=20 bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-gsho "$W" "$L" \
    list_major_bounds_seeded an_index_built_on_the_device device_resident list_major_tiles
fi
cat "$W/gpu.txt"
runner_finish
