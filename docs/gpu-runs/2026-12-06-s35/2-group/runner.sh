#!/usr/bin/env bash
# Session 35, call 2 — written, never started (the device tool had no machine, then too
# little time left); ready for the next session. `gpu-run` carried: `cand` = main, and `g1`
# = main + docs/wip/group-one-block.patch + docs/wip/group-one-block-knob.patch, by
# `TESTS=1 bash scripts/gpu-build-variants.sh cand= g1=docs/wip/group-one-block.patch+docs/wip/group-one-block-knob.patch`:
# g1's GPU tests that take its grouping (one block and three kernels; the tests run without
# the knob, at the patch's 65,536 pairs), then the A/B of cand against g1 at three pair
# limits of the one-block grouping (env_build: 32,768, 65,536 and every batch), three
# rounds: images × 2 / 5 are 20,000 / 50,000 pairs, lowdim × 10 at 10,000 100,000, every
# batch of 1,000 up to 50,000.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s35c2
b=gpu-run/bin
warm_test_cache g1 70
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-g1 $W 260 batches_grouped_by_one_block device_resident \
  list_major_tiles list_major_bounds_seeded
env_build g32k g1 LTOKIT_WIP_GROUP_ONE_BLOCK_MAX_PAIRS=32768
env_build gall g1 LTOKIT_WIP_GROUP_ONE_BLOCK_MAX_PAIRS=100000000
SETS="images lowdim-i8 lowdim-f16 lowdim wide-i8" ROUNDS=3 timeout $((560 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" cand g32k g1 gall > "$W/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" cand > "$W/summary.txt" 2>&1
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
