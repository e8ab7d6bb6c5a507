#!/usr/bin/env bash
# Session 36, call 1 (`gpu-run` carried). Builds, by
# scripts/gpu-build-variants.sh with TESTS=1 on main 3b4e7c0:
#   cand = main;
#   g1   = main + docs/wip/group-one-block.patch + docs/wip/group-one-block-knob.patch
#          (the grouping in one block up to 65,536 pairs);
#   gm   = g1 + docs/wip/merge-ranked.patch (the register merge ranks the few candidates
#          at or under the smallest of the probes' k-th scores).
# Shortened to fit what device time was left after twelve refused starts: gm's GPU tests
# that take the one-block grouping and the register merge, the A/B of cand, g1 and gm (two
# rounds), then an ncu timeline of gm's images × 2.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s36c1
b=gpu-run/bin
warm_test_cache gm 50
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-gm $W 150 batches_grouped_by_one_block \
  list_major_bounds_seeded
SETS="images lowdim-i8 lowdim-f16 lowdim wide-i8" ROUNDS=2 timeout $((245 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" cand g1 gm > "$W/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" cand > "$W/summary.txt" 2>&1
cp "$W/summary.txt" "$OUT/ab-summary.txt"
timeline gm images 256 2 275
runner_finish
