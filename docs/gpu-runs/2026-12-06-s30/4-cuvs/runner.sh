#!/usr/bin/env bash
# Session 30, the cuVS call (after the cuVS wheel chunks, 27 MiB each, went to /root/cuvs/
# in the calls before it: p11 with call 3, p00–p10 one a call): cuVS 26.10 beside main's tip (`prev`, built as for
# call 3) at batches 10,000 and 1,000, on the same files, in the same call — the first
# side-by-side on the H100 (sessions 25 and 26 measured on the H200).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s30c

BUILDS="prev" SCANS=auto BATCH=10000 timeout $((380 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b10k \
  lowdim:1024:5,10,20,50 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $OUT/b10k.log 2>&1
echo "10k at $SECONDS s" >> $W/times.txt
BUILDS="prev" SCANS=auto BATCH=1000 timeout $((545 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b1k \
  lowdim:1024:5,20,50 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $OUT/b1k.log 2>&1
echo "1k at $SECONDS s" >> $W/times.txt
cp $W/b10k/prev/summary.md $OUT/b10k-prev.md 2>/dev/null
cp $W/b1k/prev/summary.md $OUT/b1k-prev.md 2>/dev/null
cp $W/times.txt $OUT/
cat $W/times.txt; cat $OUT/b10k-prev.md 2>/dev/null | head -60
