#!/usr/bin/env bash
# Session 33, call 3 (about 330 s, `gpu-run` carried: `TESTS=1 bash scripts/gpu-build-variants.sh
# gdotimg=docs/wip/gdotimg.patch`, then `bash scripts/gpu-build-variants.sh prev=
# gdot=docs/wip/gdot.patch` on main c4b16c4):
# - gdot: the seed by list of call 2 (gseed), each row scored by its dot product with the
#   query alone (ivf_dot: one __dp4a a word of 8-bit rows) and its squared norm from the
#   lists' row_norms, where gseed formed each row's distance as the per-query seed does;
# - gdotimg: gdot, seeding by list wherever it runs (the images' 2 and 5 probes too).
# GPU tests of gdotimg first, then the A/B (three rounds), then ncu timelines.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s33c3
b=gpu-run/bin
warm_test_cache gdotimg 100
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-gdotimg $W 220 list_major_bounds_seeded \
  device_resident list_major_tiles
SETS="lowdim-i8 lowdim-f16 wide-i8 images" ROUNDS=3 timeout $((300 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev gdot gdotimg > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
timeline gdot lowdim-i8 1024 10 320; timeline gdot lowdim-f16 1024 20 335; timeline gdotimg images 256 2 350
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
