#!/usr/bin/env bash
# Session 39's third runner (not run in session 39: no device time left): main (`cand`,
# with tile-by-slots) against kr (docs/wip/keep-rounds.patch: the 8-bit tiles append kept
# accumulators one a lane a round instead of testing each of the 16 bits) and krn (kr with
# docs/wip/keep-no-ask.patch: the 8-bit tiles form the keep bits without first asking
# whether the warp keeps any) and ph2 (main with every list-major batch in two phases,
# `--phases always`: below the 300 pairs a list the phases were measured at in session 19,
# before the seeds and tile-by-slots) and rb (docs/wip/rank-buckets.patch: each list's pairs
# by probe rank, first, near, far, so that the far probes' tiles run last) and rbs (rb with
# docs/wip/rank-split.patch: no tile holds both near and far probes, the far ones' tiles
# in the grid's second run) and rbs1 (rbs with docs/wip/rank-near1.patch: rank 1 alone is
# near), on the 8-bit sets, then kr's and rbs's GPU tests. Build on dev, from main
# `a049950` or later with the same crates:
#   TESTS=1 bash scripts/gpu-build-variants.sh cand= kr=docs/wip/keep-rounds.patch \
#     rb=docs/wip/rank-buckets.patch rbs=docs/wip/rank-buckets.patch+docs/wip/rank-split.patch
#   bash scripts/gpu-build-variants.sh krn=docs/wip/keep-rounds.patch+docs/wip/keep-no-ask.patch \
#     rbs1=docs/wip/rank-buckets.patch+docs/wip/rank-split.patch+docs/wip/rank-near1.patch
#   tar cJf gpu-run/bins.tar.xz -C gpu-run/bin . && rm -rf gpu-run/bin
# LIMIT (default 300) bounds the call.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s39kr
L=${LIMIT:-300}
b=gpu-run/bin
bench_arg_build ph2 cand --phases always
SETS="lowdim-i8 images wide-i8" ROUNDS=${ROUNDS:-2} ab_against $((L * 45 / 100)) cand kr krn ph2 rb rbs rbs1
grep -E "scan|lmscan" "$W/ab.log" | tail -40 > "$OUT/ab-scan.txt" 2>/dev/null
SINCE=$SECONDS MIN_LEFT=10 bash scripts/gpu-tests.sh $b/test-ivf-kr $W $((L * 75 / 100)) \
  list_major_tiles eight_bit_distances list_major_bounds_seeded
# rbs changes the grouping (rb's counters and cursors, and its tiles): the tests that
# group the most shapes.
SINCE=$SECONDS MIN_LEFT=10 bash scripts/gpu-tests.sh $b/test-ivf-rbs $W $((L - 3)) \
  small_batches_cut_long_lists list_major_tiles device_resident
runner_finish
