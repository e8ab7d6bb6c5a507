#!/usr/bin/env bash
# Session 46's A/B, test and profile call (an H100 or H200): BUILDS (the first is the
# base) on SETS, ROUNDS rounds for at most AB seconds (none with AB=0); then the GPU tests
# of TESTS_OF (a build with gpu-run/bin/test-ivf-NAME) until LIMIT − PROFILE_S seconds;
# then, with PROFILE=1, full ncu profiles of main (the images × 2 and × 20 scans, the
# images' imma score matrix) until LIMIT seconds. Carry gpu-run (dev's bins.tar.xz, built by
#   TESTS=1 bash scripts/gpu-build-variants.sh main= all4=… (docs/wip/README.md), tarred
#   with XZ_OPT=-9). Session 46's first call:
#   BUILDS="main all4 rkom sk pf ctile" SETS="images lowdim-i8" ROUNDS=1 AB=110 TESTS_OF=all4 LIMIT=330 bash docs/gpu-runs/2026-12-07-s46/call.sh
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s46a
L=${LIMIT:-400}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
[ "${AB:-150}" -gt 0 ] && SETS=${SETS:-"images lowdim-i8"} ROUNDS=${ROUNDS:-2} ab_against "${AB:-150}" ${BUILDS:?BUILDS}
if [ -n "${TESTS_OF:-}" ]; then
  tests_of "$TESTS_OF" 100 $((L - ${PROFILE_S:-0})) \
    ${TEST_NAMES:-every_variant list_major_tiles list_major_bounds_seeded list_major_lists_longer eight_bit_distances small_batches_cut probing_every_list large_batches_score rows_with_more_tied small_batches_split pairs_counted}
fi
if [ -n "${PROFILE:-}" ]; then
  python3 scripts/make-bench-data.py /tmp/bench-data images > /dev/null 2>&1
  full_profile img2 main 0 images 256 2 $((L - 100))
  full_profile img20 main 0 images 256 20 $((L - 50))
  coarse_profile main $((L - 8))
  profile_summaries img2 img20 coarse
fi
cat "$W/gpu.txt"
runner_finish
