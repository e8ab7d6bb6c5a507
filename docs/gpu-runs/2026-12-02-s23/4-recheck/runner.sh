#!/usr/bin/env bash
# Session 23, the recheck: the cuVS call (3-final-cuvs) had lowdim-i8 × 10 / × 20 at
# batch 10,000 8.5 / 10.3 % slower with the new main than with main before it (one run of
# each, its coarse search 117 against 96 µs though its kernels did not change), where
# call 1's A/B had the same kernels +2.8 / +1.5 %. So: the A/B of prev against new, three
# rounds interleaved, on the seeded sets, and ncu durations of lowdim-i8 × 10 and × 20.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s23c
SETS="lowdim-i8 lowdim-f16 wide-i8" ROUNDS=3 bash scripts/gpu-ab.sh $W prev new > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
timeline prev lowdim-i8 1024 10 300; timeline new lowdim-i8 1024 10 300
timeline prev lowdim-i8 1024 20 300; timeline new lowdim-i8 1024 20 300
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> $W/times.txt
runner_finish
