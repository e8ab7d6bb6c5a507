#!/usr/bin/env bash
# Session 34, call 1 (`gpu-run` carried; builds on main 5182d95:
# `TESTS=1 bash scripts/gpu-build-variants.sh prev= h16cp=docs/wip/h16cp.patch tseed=docs/wip/tseed.patch`,
# `bash scripts/gpu-build-variants.sh selrank=docs/wip/selrank.patch`,
# `TESTS=1 bash scripts/gpu-build-variants.sh hs=docs/wip/h16cp.patch+docs/wip/selrank.patch`):
# - h16cp: f16 queries copied with cp.async into the f16 score matrix, three stages;
# - selrank: the coarse selection of rows in registers ranks the scores under its bound;
# - tseed: the bounds' seed by list on the scan's own tile arithmetic;
# - always: prev with both probe phases at every batch (`--phases always`), to sweep
#   MIN_PAIRS_PER_LIST_PHASED now that the second phase's grouping is free.
# GPU tests of tseed and hs first, then the A/B (three rounds), then ncu timelines.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s34c1
b=gpu-run/bin
printf '#!/bin/sh\nexec "$(dirname "$0")/ltokit-prev" "$@" --phases always\n' > $b/ltokit-always
chmod +x $b/ltokit-always
cp $b/ivf-prev.ltkb $b/ivf-always.ltkb
mkdir -p /tmp/ab-cache-prev && ln -sfn /tmp/ab-cache-prev /tmp/ab-cache-always
warm_test_cache tseed 130
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-tseed $W 250 list_major_bounds_seeded device_resident
warm_test_cache hs 40
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-hs $W 340 rows_with_more_tied large_batches
SETS="lowdim-i8 lowdim-f16 lowdim images" ROUNDS=3 timeout $((530 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev h16cp selrank tseed always > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
timeline selrank lowdim-i8 1024 10 555; timeline h16cp lowdim-f16 1024 20 575
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-tseed $W 590 list_major_tiles
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
