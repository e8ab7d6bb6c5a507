#!/usr/bin/env bash
# Session 25, the cuVS call (after the chunks p00–p08 went to /root/cuvs/ in the calls
# before it): cuVS 26.10 beside main `fd4be16` (prev) and `bias` (the rows' norms from the
# lists, the f16 wide-room tile asking first, the f16/f32 L2 keep bound; call 1's A/B
# winner) at batch 10,000, and beside `bias` at 1,000, on the same files, in the same call.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s25c
mkdir -p /root/cuvs && cp cuvs-chunks/p09 /root/cuvs/p09
BUILDS="prev bias" SCANS=auto BATCH=10000 timeout $((400 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b10k \
  lowdim:1024:5,10,20,30,50,100 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $OUT/b10k.log 2>&1
echo "10k at $SECONDS s" >> $W/times.txt
BUILDS="bias" SCANS=auto BATCH=1000 timeout $((520 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b1k \
  lowdim:1024:5,10,20,50 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $OUT/b1k.log 2>&1
echo "1k at $SECONDS s" >> $W/times.txt
for b in prev bias; do cp $W/b10k/$b/summary.md $OUT/b10k-$b.md 2>/dev/null; done
cp $W/b1k/bias/summary.md $OUT/b1k-bias.md 2>/dev/null
cp $W/times.txt $OUT/
cat $W/times.txt; cat $OUT/b10k-bias.md 2>/dev/null | head -60
