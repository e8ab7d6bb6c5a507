#!/usr/bin/env bash
# Session 20, call 9 (right after call 8, the machine warm): the IVF GPU tests of the build
# that the A/B chose (BUILD), then cuVS beside it at batch 1,000 with the time left.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s20b
B=${BUILD:?}
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-$B $W 430 list_major_tiles device_resident \
  list_major_bounds_seeded small_batches_cut list_major_lists_longer probing_every_list
BUILDS="$B" SCANS=auto BATCH=1000 timeout $((585 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b1k \
  lowdim:1024:5,10,20,50 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $OUT/b1k.log 2>&1
echo "1k at $SECONDS s" >> $W/times.txt
runner_finish
