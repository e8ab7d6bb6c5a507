#!/usr/bin/env bash
# The next call's runner (written in session 38, not yet run): main as landed in session 38
# (nearest-first lists, the seed's 16 KiB, the 8-bit row copy by warp columns) against the
# main it replaced, both beside cuVS; main's GPU tests; two candidates.
# Deadlines come from the call's length, LIMIT seconds (default 590). Build on dev, from main:
#   TESTS=1 bash scripts/gpu-build-variants.sh cand= prev=docs/wip/prev-s37.patch \
#     goff=docs/wip/group-offsets-shared.patch
#   bash scripts/gpu-build-variants.sh nrk=docs/wip/nearest-rows-knob.patch
#   tar cJf gpu-run/bins.tar.xz -C gpu-run/bin . && rm -rf gpu-run/bin
# and carry `gpu-run`; the cuVS wheel chunks go to /root/cuvs/ first, one call a chunk
# (CUVS=0 skips cuVS):
#   cand  = main;
#   prev  = main before session 38 (`4afbd49`'s crates: base-order lists, a 32 KiB seed, the
#           row copy by chunk index);
#   nf128 = main with 128 rows nearest first (nrk: env LTOKIT_WIP_NEAREST_FIRST_ROWS), the
#           rows lowdim-i8's 16 KiB seed reads (keeps-sim: 40.7 → 39.2 rows kept a query);
#   goff  = main with ivf_group_offsets_kernel reading counts, list order and starts from
#           shared memory (up to 2,048 lists) instead of chains of dependent global loads
#           (one block, 5.4–7.3 µs a batch in session 38's timelines).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s38n
L=${LIMIT:-590}
b=gpu-run/bin
env_build nf128 nrk LTOKIT_WIP_NEAREST_FIRST_ROWS=128
builds="prev cand nf128 goff" sets="lowdim-i8 images lowdim-f16 lowdim wide-i8" rounds=2
# A short call: three builds, four sets; a very short one: main against prev on the misses.
[ "$L" -lt 450 ] && builds="prev cand goff" sets="lowdim-i8 images lowdim-f16 lowdim"
[ "$L" -lt 200 ] && builds="prev cand" sets="lowdim-i8 images"
# shellcheck disable=SC2086 # the builds are words
SETS="$sets" ROUNDS=$rounds timeout $((L * ${AB_PCT:-40} / 100 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" $builds > "$W/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
cp "$W/summary.txt" "$OUT/ab-summary.txt"
warm_test_cache cand ${WARM:-75}
# The tests session 38's changes touch first, then more of main's IVF GPU tests; then
# goff's grouping under the tests that group the most shapes.
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-cand $W $((L * ${TEST_PCT:-62} / 100)) \
  list_major_bounds_seeded list_major_tiles an_index_built_on_the_device device_resident \
  every_variant_matches_the_cpu_reference list_major_lists_longer eight_bit_distances \
  small_batches_cut_long_lists
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-goff $W $((L * ${GOFF_PCT:-75} / 100)) \
  list_major_tiles small_batches_cut_long_lists device_resident
if [ "${CUVS:-1}" = 1 ]; then
  sets="images:256:2,5,10,20 lowdim-i8:1024:10,20,50 lowdim:1024:10,20,50 lowdim-f16:1024:10,20,50 wide-i8:512:10,20,50"
  # shellcheck disable=SC2086 # the sets are words
  BUILDS="prev cand" SCANS=auto BATCH=10000 timeout $((L - 40 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b10k $sets \
    > $W/b10k.log 2>&1
  echo "cuvs rc $? at $SECONDS s" >> $W/times.txt
  for x in prev cand; do cp $W/b10k/$x/summary.md $OUT/b10k-$x.md 2>/dev/null; done
fi
timeline cand images 256 2 $((L - 20))
timeline goff lowdim-i8 1024 10 "$L"
runner_finish
