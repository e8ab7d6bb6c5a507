#!/usr/bin/env bash
# Session 23, the last call (after the cuVS chunks p00–p08 went to /root/cuvs/ in the calls
# before it): the GPU tests of the new main (`new`: the seed of one warp a query for
# batches of 5,000 or more, each lane's best two rows; 8-bit signed L2 by three dp4a),
# then cuVS 26.10 beside main before it (`prev`, efa6587) and `new` at batch 10,000 and
# beside `new` at 1,000, on the same files, in the same call; then the per-query variant
# test (the i8 L2 per-query scan changed) in the time left.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s23b
mkdir -p /root/cuvs && cp cuvs-chunks/p09 /root/cuvs/p09
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-new $W 150 list_major_bounds_seeded device_resident
BUILDS="prev new" SCANS=auto BATCH=10000 timeout $((420 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b10k \
  lowdim:1024:5,10,20,30,50,100 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $OUT/b10k.log 2>&1
echo "10k at $SECONDS s" >> $W/times.txt
BUILDS="new" SCANS=auto BATCH=1000 timeout $((530 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b1k \
  lowdim:1024:5,10,20,50 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $OUT/b1k.log 2>&1
echo "1k at $SECONDS s" >> $W/times.txt
for b in prev new; do cp $W/b10k/$b/summary.md $OUT/b10k-$b.md 2>/dev/null; done
cp $W/b1k/new/summary.md $OUT/b1k-new.md 2>/dev/null
MIN_LEFT=30 SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-new $W 590 every_variant_matches
runner_finish
