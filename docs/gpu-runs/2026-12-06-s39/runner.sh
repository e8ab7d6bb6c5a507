#!/usr/bin/env bash
# Session 39's runner (session 38's docs/gpu-runs/2026-12-06-s38/next/runner.sh, which it replaced, with sk in
# nf128's place): main as landed in session 38 (nearest-first lists, the seed's 16 KiB, the
# 8-bit row copy by warp columns) against the main it replaced, both beside cuVS; main's GPU
# tests; two candidates.
# Deadlines come from the call's length, LIMIT seconds (default 590). Build on dev, from main:
#   TESTS=1 bash scripts/gpu-build-variants.sh cand= prev=docs/wip/prev-s37.patch \
#     goff=docs/wip/group-offsets-shared.patch sk=docs/wip/split-k.patch
#   tar cJf gpu-run/bins.tar.xz -C gpu-run/bin . && rm -rf gpu-run/bin
# and carry `gpu-run`; the cuVS wheel chunks go to /root/cuvs/ first, one call a chunk
# (CUVS=0 skips cuVS):
#   cand  = main;
#   prev  = main before session 38 (`4afbd49`'s crates: base-order lists, a 32 KiB seed, the
#           row copy by chunk index);
#   sk    = main with the 8-bit register tiles' products in two accumulator sets over
#           alternate k steps (split-k.patch): chains of 13 dependent IMMA, not 25, at 784
#           dimensions (the images' scan, latency-bound at 25 % occupancy);
#   goff  = main with ivf_group_offsets_kernel reading counts, list order and starts from
#           shared memory (up to 2,048 lists) instead of chains of dependent global loads
#           (one block, 5.4–7.3 µs a batch in session 38's timelines).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s38n
L=${LIMIT:-590}
b=gpu-run/bin
builds="prev cand sk goff" sets="lowdim-i8 images lowdim-f16 lowdim wide-i8" rounds=2
# A short call: three builds, four sets; a very short one: main against prev on the misses.
[ "$L" -lt 450 ] && builds="prev cand sk goff" sets="lowdim-i8 images wide-i8"
[ "$L" -lt 200 ] && builds="cand sk" sets="images wide-i8"
# shellcheck disable=SC2086 # the builds are words
SETS="$sets" ROUNDS=$rounds timeout $((L * ${AB_PCT:-40} / 100 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" $builds > "$W/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
cp "$W/summary.txt" "$OUT/ab-summary.txt"
warm_test_cache cand ${WARM:-75}
# The tests session 38's changes touch first, then more of main's IVF GPU tests; then
# goff's grouping under the tests that group the most shapes.
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-cand $W $((L * ${TEST_PCT:-56} / 100)) \
  list_major_bounds_seeded list_major_tiles an_index_built_on_the_device device_resident
# sk changes the 8-bit register tiles only: the tiles' own test (u8 × 784 among its shapes)
# and the 8-bit distances.
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-sk $W $((L * ${SK_PCT:-66} / 100)) \
  list_major_tiles eight_bit_distances
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-goff $W $((L * ${GOFF_PCT:-75} / 100)) \
  list_major_tiles small_batches_cut_long_lists device_resident
[ "${CUVS:-1}" = 1 ] && cuvs_beside "$L" prev cand
timeline cand images 256 2 $((L - 20))
timeline goff lowdim-i8 1024 10 "$L"
runner_finish
