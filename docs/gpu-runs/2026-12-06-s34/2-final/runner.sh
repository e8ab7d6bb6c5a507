#!/usr/bin/env bash
# Session 34, call 2 (`gpu-run` carried: `prev` = main 5182d95, the session's start, from
# call 1's builds; `final` = main 96b2bb8 (select_ranked, the seed by list on the tile
# arithmetic) by `TESTS=1 bash scripts/gpu-build-variants.sh final=`; `fh` = final with
# docs/wip/h16cp.patch; `gpu-run/cuvs_bench.py` from ../shared/peer; the cuVS wheel chunks
# sent to /root/cuvs/ by fifteen calls of `mkdir -p /root/cuvs && cp cuvs-chunks/pNN
# /root/cuvs/` with `cuvs-chunks/pNN` carried):
# the GPU tests of final that call 1 did not run on its code, the A/B of prev, final and fh
# (three rounds), then cuVS 26.10 beside prev and final at batch 10,000, same files, same call.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s34c2
b=gpu-run/bin
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-final $W 230 rows_with_more_tied large_batches device_resident
SETS="lowdim-i8 lowdim-f16 lowdim images wide-i8" ROUNDS=3 timeout $((390 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev final fh > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
sets="images:256:2,5,10,20 lowdim-i8:1024:10,20,50 lowdim:1024:10,20,50 lowdim-f16:1024:10,20,50 wide-i8:512:10,20,50"
# shellcheck disable=SC2086 # the sets are words
BUILDS="prev final" SCANS=auto BATCH=10000 timeout $((585 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b10k $sets \
  > $OUT/b10k.log 2>&1
echo "cuvs rc $? at $SECONDS s" >> $W/times.txt
for x in prev final; do cp $W/b10k/$x/summary.md $OUT/b10k-$x.md 2>/dev/null; done
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
