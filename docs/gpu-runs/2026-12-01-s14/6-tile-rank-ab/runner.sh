#!/usr/bin/env bash
# Session 14, call 6: A/B of main against tile-rank (each list-major tile's rank written
# by the grouping kernel instead of a binary search per block), then its list-major
# GPU tests against the CPU reference, all within about 200 s.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab3; mkdir -p $w gpu-run/bin
tar xJf gpu-run/bins3.tar.xz -C gpu-run/bin
SETS="images lowdim-i8 lowdim-f16" bash scripts/gpu-ab.sh $w prev trk > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
for t in list_major_tiles list_major_bounds_seeded; do
  left=$((200 - SECONDS)); [ $left -lt 50 ] && { echo "not run: trk $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ivf-trk --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "trk $t exit $? at $SECONDS s" >> $w/times.txt
done
cd $w && tar czf $o/ab3.tgz --exclude='*/nv' --exclude='*.ivf' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
grep -E "^test |test result|panicked|not run" $w/tests.txt | cut -c1-250
cat $w/times.txt
