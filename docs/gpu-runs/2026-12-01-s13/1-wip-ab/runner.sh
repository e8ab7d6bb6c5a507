#!/usr/bin/env bash
# Session 13, call 1: A/B of the three patches prepared in session 12 (docs/wip:
# lane-min-seed, wide-room, coarse-five-blocks) and all three together against main
# (403d403), on the four grid sets and two wide ones (f16 x 256, i8 x 512: the shapes
# where the candidate room decides the blocks an SM holds); ncu of the coarse kernels at
# the GPU's own clocks with warm caches; the list-major and coarse GPU tests on the
# build with all three patches.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab; mkdir -p $w
SETS="lowdim-i8 images lowdim-f16 lowdim wide-f16 wide-i8" bash scripts/gpu-ab.sh $w prev lmin wide c5 all > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
d=/tmp/bench-data
for s in images:256:2 lowdim-i8:1024:10; do
  IFS=: read -r name lists probes <<< "$s"
  for b in prev c5; do
    L="gpu-run/bin/ltokit-$b ivf"
    [ -f $w/$name.ivf ] || timeout 60 $L build --base $d/$name/base.npy --lists $lists -o $w/$name.ivf --cache-dir /tmp/ab-cache-$b > $w/build-$name.log 2>&1
    timeout 90 ncu --clock-control none --cache-control none --section SpeedOfLight --section LaunchStats --section Occupancy -k 'regex:ivf_(coarse|group|lmseed|merge)' \
      $L search --index $w/$name.ivf --queries $d/$name/queries.npy --k 10 --probes $probes --scan list-major \
      --cache-dir /tmp/ab-cache-$b -o /dev/null > $w/ncu-$name-$b.log 2>&1
    echo "ncu $name $b exit $? at $SECONDS s" >> $w/times.txt
  done
done
for t in list_major_tiles list_major_bounds_seeded large_batches_score small_batches_split list_major_lists_longer; do
  left=$((560 - SECONDS)); [ $left -lt 15 ] && { echo "not run: $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ivf-all --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "$t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
cd $w && tar czf $o/ab.tgz --exclude='*/nv' --exclude='*.ivf' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
for f in $w/ncu-*.log; do echo "== $f"; grep -E "^  ivf_|Duration|Registers Per|Achieved Occ" $f | paste - - - - | awk '{print $1, $0}' | cut -c1-220; done
grep -E "^test |test result|panicked|not run" $w/tests.txt | cut -c1-200
cat $w/times.txt
