#!/usr/bin/env bash
# Session 21, call 9 (after the cuVS chunks p00–p07 (36 MiB pieces) went to /root/cuvs/ in calls 3–10): the
# GPU tests of `rep` (replay.patch, its own stream this time: repeated device-resident
# searches recorded as one CUDA graph and replayed), the A/B of main (prev) against rep and
# `norep` (rep with --replay off), six sets, two rounds; then cuVS 26.10 beside prev and rep
# at batch 10,000 and beside rep at 1,000, on the same files, in the same call.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s21b
mkdir -p /root/cuvs && cp gpu-run/cv/p08 /root/cuvs/p08
printf '#!/bin/sh\nexec "$(dirname "$0")/ltokit-rep" "$@" --replay off\n' > gpu-run/bin/ltokit-norep
chmod +x gpu-run/bin/ltokit-norep; cp gpu-run/bin/ivf-rep.ltkb gpu-run/bin/ivf-norep.ltkb
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-rep $W 60 repeated_device_searches device_resident
SETS="lowdim-i8 images lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=2 bash scripts/gpu-ab.sh $W prev rep norep > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
BUILDS="prev rep" SCANS=auto BATCH=10000 timeout $((440 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b10k \
  lowdim:1024:5,10,20,30,50,100 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $OUT/b10k.log 2>&1
echo "10k at $SECONDS s" >> $W/times.txt
BUILDS="rep" SCANS=auto BATCH=1000 timeout $((585 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b1k \
  lowdim:1024:5,10,20,50 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $OUT/b1k.log 2>&1
echo "1k at $SECONDS s" >> $W/times.txt
for b in prev rep; do cp $W/b10k/$b/summary.md $OUT/b10k-$b.md 2>/dev/null; done
cp $W/b1k/rep/summary.md $OUT/b1k-rep.md 2>/dev/null
runner_finish
