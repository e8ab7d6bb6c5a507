#!/usr/bin/env bash
# Session 39's second runner: main (`cand`) against ts (docs/wip/tile-by-slots.patch: the
# mma tiles multiply by the slots a tile holds, not its size — a 64-slot tile with at most
# 32 queries as a 32-slot one, at most 16 as a 16-slot one; the seed tiles alike), ts's
# GPU tests, both beside cuVS, ts's timelines. Build on dev, from main:
#   TESTS=1 bash scripts/gpu-build-variants.sh cand= ts=docs/wip/tile-by-slots.patch
#   tar cJf gpu-run/bins.tar.xz -C gpu-run/bin . && rm -rf gpu-run/bin
# The cuVS wheel chunks go to /root/cuvs/ first (CUVS=0 skips cuVS). LIMIT (default 590).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s39ts
L=${LIMIT:-590}
b=gpu-run/bin
SETS="lowdim-i8 images lowdim-f16 lowdim wide-i8" ROUNDS=${ROUNDS:-3} timeout $((L * 30 / 100)) \
  bash scripts/gpu-ab.sh "$W/ab" cand ts > "$W/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" cand > "$W/summary.txt" 2>&1
cp "$W/summary.txt" "$OUT/ab-summary.txt"
warm_test_cache ts ${WARM:-75}
# Partial tiles, a list probed by one query, k up to 1024 (the scan); the seeded bounds
# (the seed tiles); then the rest of the list-major shapes.
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-ts $W $((L * 70 / 100)) \
  list_major_tiles list_major_bounds_seeded small_batches_cut_long_lists list_major_lists_longer \
  every_variant_matches_the_cpu_reference eight_bit_distances device_resident
[ "${CUVS:-1}" = 1 ] && cuvs_beside "$L" cand ts
timeline ts images 256 2 $((L - 20))
timeline ts lowdim-i8 1024 10 "$L"
runner_finish
