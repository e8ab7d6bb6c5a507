#!/usr/bin/env bash
# Session 44, the landing call: NEW (default main2: main with cis and krn landed) against
# cand (main before it) on SETS (default the 8-bit sets), ROUNDS (default 1) rounds for at
# most AB (default 70) seconds, then NEW's GPU tests until LIMIT (default 480) seconds.
# Carry gpu-run (bins.tar.xz: cand, NEW, test-ivf-NEW). Session 44's call 4 ran
#   LIMIT=470 bash docs/gpu-runs/2026-12-07-s44/land.sh
# The next session's first call (kb: docs/wip/keep-blocks.patch, built with TESTS=1
# beside cand= by scripts/gpu-build-variants.sh):
#   NEW=kb SETS="lowdim-f16 lowdim lowdim-i8 images" ROUNDS=2 AB=120 LIMIT=450 bash docs/gpu-runs/2026-12-07-s44/land.sh
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s44l
L=${LIMIT:-480}
new=${NEW:-main2}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
SETS=${SETS:-"lowdim-i8 images wide-i8"} ROUNDS=${ROUNDS:-1} ab_against "${AB:-70}" cand "$new"
tests_of "$new" 100 "$L" \
  ${TEST_NAMES:-pairs_counted_in_the_coarse_selection eight_bit_distances list_major_bounds_seeded list_major_tiles every_variant repeated_device_searches}
cat "$W/gpu.txt"
runner_finish
