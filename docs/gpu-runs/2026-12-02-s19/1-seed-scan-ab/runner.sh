#!/usr/bin/env bash
# Session 19, call 1: A/B of main (prev) against `sscan` (the seed as the list-major scan
# itself over each query's first probe, docs/wip/seed-scan.patch) and `sall` (sscan,
# seeding every type and shape with k <= 32); six sets, three rounds; ncu durations of
# every kernel; sscan's GPU tests. (As run, these commands were written out here; they are now the
# helpers of scripts/gpu-runner-lib.sh.)
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/ab1
SETS="lowdim-i8 images lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $W prev sscan sall > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
timeline sscan lowdim-i8 1024 10 300; timeline prev lowdim-i8 1024 10 300
timeline sall images 256 10 300; timeline sscan lowdim-f16 1024 10 300
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-sscan $W 585 list_major_seed_scan_covers device_resident list_major_bounds_seeded list_major_tiles
runner_finish
