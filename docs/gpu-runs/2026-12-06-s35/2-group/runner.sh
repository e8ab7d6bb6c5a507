#!/usr/bin/env bash
# Session 35, call 2 (`gpu-run` carried: `cand` = main f478f45's code, from call 1's builds;
# `g1` = branch group1, the grouping of batches of up to 65,536 pairs over at most 1,024
# lists in one block, by `TESTS=1 bash scripts/gpu-build-variants.sh g1=`): g1's GPU tests
# that take its grouping (one block and three kernels) on a warmed test cache, then the A/B
# of cand and g1 (two rounds), cut to the 311 s of device time left.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s35c2
b=gpu-run/bin
warm_test_cache g1 45
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-g1 $W 130 batches_grouped_by_one_block device_resident
SETS="images lowdim-i8" ROUNDS=2 timeout $((235 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" cand g1 > "$W/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" cand > "$W/summary.txt" 2>&1
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
