#!/usr/bin/env bash
# Session 31, call 3 (about 330 s, `gpu-run` carried: prev, imma2 and lmw32 from
# `TESTS=1 bash scripts/gpu-build-variants.sh imma2=docs/wip/coarse-imma-rows.patch
# lmw32=docs/wip/lmwarp32.patch`):
# - imma2: the 8-bit score matrix with a scale per centre (call 1's `imma`, one scale for
#   all, failed large_batches: the tests' far empty-list centre took the others'
#   precision) — its GPU tests, then the A/B;
# - lmw32: the warp scan with 32 queries a warp (call 1's lmwarp had 16 and lost 13–42 %):
#   whether halving each query's row loads turns it around — two list-major tests, then
#   the A/B.
# Then ncu timelines of imma2 on images × 2 and lmw32 on lowdim-i8 × 10. (The cuVS call
# planned before this one, 2-cuvs/runner.sh, did not fit the device time left after two
# refused starts.)
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s31c
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-imma2 $W 130 large_batches small_batches_split \
  device_resident probing_every_list
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-lmw32 $W 200 list_major_tiles list_major_lists_longer
SETS="images lowdim-i8 wide-i8" ROUNDS=3 timeout $((300 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev imma2 lmw32 > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
timeline prev images 256 2 360; timeline imma2 images 256 2 360; timeline lmw32 lowdim-i8 1024 10 360
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
