#!/usr/bin/env bash
# Session 13, call 4: the f16 score matrix with its query tile chosen by the batch (128,
# 64 or 32 queries: the largest that gives two waves of blocks; `new`) against main
# (25a25bb, `prev`, 2xTF32 tiles of 32) on the f16 and 8-bit sets, two rounds; ncu of the
# f16 score matrix's stalls and memory traffic on images (10,000 queries, 128-query
# tiles); the coarse and build GPU tests (the large-batch test's 964 queries take the
# 32-query tile).
set -u
SECONDS=0
o=$OUT; w=/tmp/ab; mkdir -p $w
SETS="lowdim-i8 images lowdim-f16 wide-f16 wide-i8" bash scripts/gpu-ab.sh $w prev new > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
d=/tmp/bench-data
L="gpu-run/bin/ltokit ivf"
timeout 60 $L build --base $d/images/base.npy --lists 256 -o $w/images.ivf --cache-dir /tmp/ab-cache-new > $w/build-images.log 2>&1
timeout 120 ncu --clock-control none --cache-control none --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
  -k 'regex:ivf_coarse_scores' $L search --index $w/images.ivf --queries $d/images/queries.npy --k 10 --probes 2 --scan list-major \
  --cache-dir /tmp/ab-cache-new -o /dev/null > $w/ncu-images-details.log 2>&1
echo "ncu exit $? at $SECONDS s" >> $w/times.txt
for t in large_batches_score an_index_built_on_the_device device_resident; do
  left=$((400 - SECONDS)); [ $left -lt 15 ] && { echo "not run: $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "$t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
cd $w && tar czf $o/ab.tgz --exclude='*/nv' --exclude='*.ivf' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
grep -E "^  ivf_|Duration|Throughput|Warp Cycles|Stall|stall|Occupancy|Registers|L2 Hit|Mem Busy|Max Bandwidth|Issue Slot" $w/ncu-images-details.log | head -60
grep -E "^test |test result|panicked|not run" $w/tests.txt | cut -c1-250
cat $w/times.txt
