#!/usr/bin/env bash
# Session 33, call 4 (about 390 s, `gpu-run` carried: `TESTS=1 bash scripts/gpu-build-variants.sh
# gdot2=docs/wip/gdot2.patch`, then `bash scripts/gpu-build-variants.sh prev=` on main
# c4b16c4):
# - gdot2: call 3's gdot (the seed by list, rows scored by their dot products and the
#   lists' row norms), the norms copied into shared memory with the rows (a global load a
#   group was a round trip in every query's chain) and each warp's first query staged
#   while the rows are copied.
# The GPU tests of gdot2 (every list-major and coarse test of session 32's tip call), then
# the A/B (three rounds), then ncu timelines.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s33c4
b=gpu-run/bin
warm_test_cache gdot2 100
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-gdot2 $W 300 list_major_bounds_seeded \
  device_resident list_major_tiles large_batches list_major_lists_longer small_batches_split \
  probing_every_list
SETS="lowdim-i8 lowdim-f16 wide-i8 images lowdim" ROUNDS=3 timeout $((370 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev gdot2 > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
timeline gdot2 lowdim-i8 1024 10 390; timeline gdot2 lowdim-f16 1024 20 405
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
