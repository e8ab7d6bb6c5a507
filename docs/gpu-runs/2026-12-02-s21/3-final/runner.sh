#!/usr/bin/env bash
# Session 21, call 11: the GPU tests of the build landed (final: group-no-list-start,
# replay, q64 score-matrix tiles) and the A/B of session 21's first main (prev, 15f211d)
# against final and `fcsr` (final + coarse-select-rows.patch: the coarse selection of
# 257–1,024 centres holding rows in registers, measured within noise in session 20 before
# the replay took the host's share away); six sets, two rounds; ncu durations.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s21c
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-final $W 150 repeated_device_searches device_resident large_batches
SETS="lowdim-i8 images lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=2 bash scripts/gpu-ab.sh $W prev final fcsr > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
timeline fcsr lowdim-i8 1024 10 300; timeline final images 256 2 300
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-final $W 440 list_major_tiles
runner_finish
