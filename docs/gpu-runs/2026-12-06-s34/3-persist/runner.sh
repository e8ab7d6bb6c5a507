#!/usr/bin/env bash
# Session 34, call 3 (`gpu-run` carried: `final` = main 96b2bb8 and `fh` = final with
# docs/wip/h16cp.patch from call 2's builds; `pers` = final with docs/wip/persist.patch
# (h16cp, and the 8-bit and f16 score matrices going through several tiles a block) by
# `TESTS=1 bash scripts/gpu-build-variants.sh pers=docs/wip/persist.patch`):
# the score-matrix GPU tests of pers, the A/B of final, fh and pers (three rounds), then ncu
# timelines of final and pers (cut to fit the 458 s of device time left after a refused start).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s34c3
b=gpu-run/bin
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-pers $W 100 large_batches_of_f16 a_non_finite_query_is_named \
  device_resident
SETS="lowdim-i8 lowdim-f16 lowdim images" ROUNDS=3 timeout $((225 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" final fh pers > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" final > "$W/summary.txt" 2>&1
timeline final lowdim-i8 1024 10 250; timeline pers lowdim-i8 1024 10 275
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
