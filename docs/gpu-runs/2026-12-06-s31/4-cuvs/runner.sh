#!/usr/bin/env bash
# Session 31, calls 4a–4c (H100, warm, one after the other; `gpu-run` carried with prev and
# imma2, the cuVS wheel chunks sent to /root/cuvs/ by twelve calls of
# `mkdir -p /root/cuvs && cp cuvs-chunks/pNN /root/cuvs/` with `cuvs-chunks/pNN` carried,
# about 3 s of device time each): cuVS 26.10 beside main's tip (`prev`) and `imma2` at batch
# 10,000, on the same files, in the same call. Run as
#   RUN=a bash docs/gpu-runs/2026-12-06-s31/4-cuvs/runner.sh   (and b, c)
# 4a ran before scripts/cold-cache.sh warmed the imma plan for the index build (its imma2
# build times include that link: 0.70 s images, 0.61 s lowdim-i8); 4b and 4c after.
set -u
. scripts/gpu-runner-lib.sh
run=${RUN:-a}
runner_start /tmp/s31$run
case $run in
  b) sets="images:256:2,5,10,20 lowdim-i8:1024:10,20,50 wide-i8:512:10,20,50" ;;
  *) sets="images:256:2,5,10,20 lowdim-i8:1024:10,20,50 lowdim:1024:10,20,50 lowdim-f16:1024:10,20,50" ;;
esac
# shellcheck disable=SC2086 # the sets are words
BUILDS="prev imma2" SCANS=auto BATCH=10000 timeout 400 bash scripts/gpu-bench-vs-cuvs.sh $W/b10k $sets \
  > $OUT/b10k.log 2>&1
echo "rc $? at $SECONDS s" >> $W/times.txt
for b in prev imma2; do cp $W/b10k/$b/summary.md $OUT/b10k-$b.md 2>/dev/null; done
(cd $W && tar czf $OUT/s31$run.tgz --exclude='*.npy' .)
cat $W/times.txt
