#!/usr/bin/env bash
# Session 13, call 3: the f16 score matrix with warp tiles of 32 queries × 32 centres and
# block tiles of 64 queries (q64: 4 warps) or 128 (q128: 8 warps), chunks of 32
# dimensions, against main (25a25bb, prev: 2xTF32 tiles of 32 × 64) — A/B on the grid and
# wide sets, two rounds; ncu of the coarse kernels at the GPU's clocks, warm caches; the
# coarse and build GPU tests on both.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab; mkdir -p $w
SETS="lowdim-i8 images lowdim-f16 lowdim wide-f16 wide-i8" bash scripts/gpu-ab.sh $w prev q64 q128 > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
d=/tmp/bench-data
for s in images:256:2 lowdim-i8:1024:10 wide-f16:512:10; do
  IFS=: read -r name lists probes <<< "$s"
  for b in q64 q128; do
    L="gpu-run/bin/ltokit-$b ivf"
    [ -f $w/$name.ivf ] || timeout 60 $L build --base $d/$name/base.npy --lists $lists -o $w/$name.ivf --cache-dir /tmp/ab-cache-$b > $w/build-$name.log 2>&1
    timeout 90 ncu --clock-control none --cache-control none --section SpeedOfLight --section LaunchStats --section Occupancy -k 'regex:ivf_coarse' \
      $L search --index $w/$name.ivf --queries $d/$name/queries.npy --k 10 --probes $probes --scan list-major \
      --cache-dir /tmp/ab-cache-$b -o /dev/null > $w/ncu-$name-$b.log 2>&1
    echo "ncu $name $b exit $? at $SECONDS s" >> $w/times.txt
  done
done
for b in q64 q128; do
for t in large_batches_score an_index_built_on_the_device device_resident; do
  left=$((570 - SECONDS)); [ $left -lt 15 ] && { echo "not run: $b $t" >> $w/tests.txt; continue; }
  echo "== $b" >> $w/tests.txt
  ( timeout $left gpu-run/bin/test-ivf-$b --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "$b $t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
done
cd $w && tar czf $o/ab.tgz --exclude='*/nv' --exclude='*.ivf' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
for f in $w/ncu-*.log; do echo "== $f"; grep -E "^  ivf_|Duration" $f | paste - - | awk '{print $1, $(NF)}'; done
grep -E "^== |^test |test result|panicked|not run" $w/tests.txt | cut -c1-250
cat $w/times.txt
