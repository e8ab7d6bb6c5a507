#!/usr/bin/env bash
# Session 44, the landing call: main2 (main with cis and krn landed) against cand (main
# before them) on the 8-bit sets, one round, then main2's GPU tests until LIMIT (default
# 480) seconds. Carry gpu-run (bins.tar.xz: cand, main2, test-ivf-main2).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s44l
L=${LIMIT:-480}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
SETS="lowdim-i8 images wide-i8" ROUNDS=1 ab_against 70 cand main2
warm_test_cache main2 100
SINCE=$SECONDS MIN_LEFT=20 bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-main2 "$W" "$L" \
  pairs_counted_in_the_coarse_selection eight_bit_distances list_major_bounds_seeded list_major_tiles \
  every_variant repeated_device_searches
cat "$W/gpu.txt"
runner_finish
