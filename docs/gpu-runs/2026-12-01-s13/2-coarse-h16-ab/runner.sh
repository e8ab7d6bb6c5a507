#!/usr/bin/env bash
# Session 13, call 2: the coarse score matrix for f16 and 8-bit queries as two f16
# products against the centres' f16 split (kernels/coarse_h16.cu, `new`) against main
# (25a25bb, `prev`: 2xTF32): A/B on the grid sets and the wide ones, two rounds; ncu of the
# stages beside the scan at the GPU's own clocks, warm caches; the GPU tests that go
# through the coarse search and the device build.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab; mkdir -p $w
SETS="lowdim-i8 images lowdim-f16 lowdim wide-f16 wide-i8" bash scripts/gpu-ab.sh $w prev new > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
d=/tmp/bench-data
for s in images:256:2 lowdim-i8:1024:10 wide-f16:512:10; do
  IFS=: read -r name lists probes <<< "$s"
  for b in prev new; do
    L="gpu-run/bin/ltokit-$b ivf"; [ $b = new ] && L="gpu-run/bin/ltokit ivf"
    [ -f $w/$name.ivf ] || timeout 60 $L build --base $d/$name/base.npy --lists $lists -o $w/$name.ivf --cache-dir /tmp/ab-cache-$b > $w/build-$name.log 2>&1
    timeout 90 ncu --clock-control none --cache-control none --section SpeedOfLight --section LaunchStats --section Occupancy -k 'regex:ivf_(coarse|group|lmseed|merge)' \
      $L search --index $w/$name.ivf --queries $d/$name/queries.npy --k 10 --probes $probes --scan list-major \
      --cache-dir /tmp/ab-cache-$b -o /dev/null > $w/ncu-$name-$b.log 2>&1
    echo "ncu $name $b exit $? at $SECONDS s" >> $w/times.txt
  done
done
for t in large_batches_score an_index_built_on_the_device device_resident small_batches_split a_non_finite probing_every_list kernels_linked_ahead; do
  left=$((570 - SECONDS)); [ $left -lt 15 ] && { echo "not run: $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "$t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
cd $w && tar czf $o/ab.tgz --exclude='*/nv' --exclude='*.ivf' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
for f in $w/ncu-*.log; do echo "== $f"; grep -E "^  ivf_|Duration" $f | paste - - | awk '{print $1, $(NF)}'; done
grep -E "^test |test result|panicked|not run" $w/tests.txt | cut -c1-250
cat $w/times.txt
