#!/usr/bin/env bash
# Session 19, call 3: the build to land (`final`: the lean step, and two phases without the
# seed from 300 pairs a list) against main (prev); six sets, two rounds; ncu durations of
# images x 10; final's GPU tests (list_major_tiles now also checks every shape in two
# phases). (As run, these commands were written out here; they are now the
# helpers of scripts/gpu-runner-lib.sh.)
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/ab3
SETS="lowdim-i8 images lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=2 bash scripts/gpu-ab.sh $W prev final > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
timeline final images 256 10 150
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-final $W 330 list_major_tiles device_resident large_batches list_major_bounds_seeded
runner_finish
