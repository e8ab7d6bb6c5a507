#!/usr/bin/env bash
# Session 33, call 2 (about 360 s, `gpu-run` carried: `bash scripts/gpu-build-variants.sh
# gseed=docs/wip/gseed.patch prev=` and `TESTS=1 bash scripts/gpu-build-variants.sh
# gseedimg=docs/wip/gseedimg.patch` on main c4b16c4, which has onegroup):
# - gseed: the bounds' seed by list where a batch's first probes are 4 or more a list: a
#   block copies a list's first 32 KiB of rows into shared memory once and seeds up to 32
#   queries whose first probe it is (the grouping tiles the first probes for it), where
#   each query's warp read its own 32 KiB from L2;
# - gseedimg: gseed, and the seed by list wherever it runs (8-bit and f16 rows, k <= 32,
#   4 or more first probes a list), not only where the probes read 6,400 rows a query:
#   the images' 2 and 5 probes seeded too (64 rows of 784 bytes, 75 KiB a block).
# GPU tests of gseedimg first (the test cache warmed with their plans), then the A/B on the
# seeded sets (lowdim-i8, lowdim-f16, wide-i8) and f32 lowdim (not seeded) and the images
# (the grouping's changes), three rounds, then ncu timelines.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s33c2
b=gpu-run/bin
warm_test_cache gseedimg 100
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-gseedimg $W 230 list_major_bounds_seeded \
  device_resident list_major_tiles
SETS="lowdim-i8 lowdim-f16 wide-i8 lowdim images" ROUNDS=3 timeout $((320 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev gseed gseedimg > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
timeline gseed lowdim-i8 1024 10 340; timeline prev lowdim-i8 1024 10 355; timeline gseedimg images 256 2 370
timeline prev images 256 2 385
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
