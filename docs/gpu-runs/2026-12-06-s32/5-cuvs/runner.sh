#!/usr/bin/env bash
# Session 32, calls 5a, 5b (H100, warm, one after the other; `gpu-run` carried with `prev` =
# main `c029d5a` (the session's start) and `final` = main `56a6c35` (pdim, cimma3 and the
# short-row selection), built by `bash scripts/gpu-build-variants.sh final=` and a release
# build of a `c029d5a` worktree, plus `gpu-run/cuvs_bench.py` from ../shared/peer; the cuVS
# wheel chunks sent to /root/cuvs/ by fifteen calls of
# `mkdir -p /root/cuvs && cp cuvs-chunks/pNN /root/cuvs/` with `cuvs-chunks/pNN` carried):
# cuVS 26.10 beside both builds at batch 10,000, on the same files, in the same call.
#   RUN=a bash docs/gpu-runs/2026-12-06-s32/5-cuvs/runner.sh   (and b)
set -u
. scripts/gpu-runner-lib.sh
run=${RUN:-a}
runner_start /tmp/s32$run
case $run in
  b) sets="images:256:2,5,10,20 lowdim-i8:1024:10,20,50 wide-i8:512:10,20,50" ;;
  *) sets="images:256:2,5,10,20 lowdim-i8:1024:10,20,50 lowdim:1024:10,20,50 lowdim-f16:1024:10,20,50" ;;
esac
# shellcheck disable=SC2086 # the sets are words
BUILDS="prev final" SCANS=auto BATCH=10000 timeout 400 bash scripts/gpu-bench-vs-cuvs.sh $W/b10k $sets \
  > $OUT/b10k.log 2>&1
echo "rc $? at $SECONDS s" >> $W/times.txt
for b in prev final; do cp $W/b10k/$b/summary.md $OUT/b10k-$b.md 2>/dev/null; done
(cd $W && tar czf $OUT/s32$run.tgz --exclude='*.npy' .)
cat $W/times.txt
