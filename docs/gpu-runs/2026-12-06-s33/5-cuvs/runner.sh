#!/usr/bin/env bash
# Session 33, call 5 (H100, warm; `gpu-run` carried with `prev` = main `4426515` (the
# session's start) and `final` = main `e24d946` (one grouping for both phases, the seed by
# list), built by `bash scripts/gpu-build-variants.sh final=` and a release build of a
# `4426515` worktree, plus `gpu-run/cuvs_bench.py` from ../shared/peer; the cuVS wheel chunks
# sent to /root/cuvs/ by fifteen calls of `mkdir -p /root/cuvs && cp cuvs-chunks/pNN
# /root/cuvs/` with `cuvs-chunks/pNN` carried): cuVS 26.10 beside both builds at batch
# 10,000, on the same files, in the same call.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s33c5
sets="images:256:2,5,10,20 lowdim-i8:1024:10,20,50 lowdim:1024:10,20,50 lowdim-f16:1024:10,20,50 wide-i8:512:10,20,50"
# shellcheck disable=SC2086 # the sets are words
BUILDS="prev final" SCANS=auto BATCH=10000 timeout 200 bash scripts/gpu-bench-vs-cuvs.sh $W/b10k $sets \
  > $OUT/b10k.log 2>&1
echo "rc $? at $SECONDS s" >> $W/times.txt
for b in prev final; do cp $W/b10k/$b/summary.md $OUT/b10k-$b.md 2>/dev/null; done
(cd $W && tar czf $OUT/s33c5.tgz --exclude='*.npy' .)
cat $W/times.txt
