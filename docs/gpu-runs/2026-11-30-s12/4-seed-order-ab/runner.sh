#!/usr/bin/env bash
# Session 12, call 4: A/B of the seed read in list order (docs/wip/ord.patch: the
# queries taken in the order of their first probe's list, so that concurrent blocks read
# the same lists) and of the same at 64 KiB a query (ord512: 512 rows of i8, 256 of f16)
# against main (9253890); ncu durations of the seed and grouping for i8 x 10 with each;
# then the list-major GPU tests on the ord build.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab; mkdir -p $w
bash scripts/gpu-ab.sh $w prev ord ord512 > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
d=/tmp/bench-data; x=/tmp/x; mkdir -p $x
for b in prev ord ord512; do
  L="gpu-run/bin/ltokit-$b ivf"
  [ -f $x/i8.ivf ] || timeout 60 $L build --base $d/lowdim-i8/base.npy --lists 1024 -o $x/i8.ivf --cache-dir /tmp/ab-cache-$b > $w/build-i8.log 2>&1
  timeout 100 ncu --section SpeedOfLight -k 'regex:ivf_(group|lmseed)' \
    $L search --index $x/i8.ivf --queries $d/lowdim-i8/queries.npy --k 10 --probes 10 --scan list-major \
    --cache-dir /tmp/ab-cache-$b -o /dev/null > $w/ncu-i8-$b.log 2>&1
  echo "ncu $b exit $? at $SECONDS s" >> $w/times.txt
done
for t in list_major_bounds_seeded list_major_tiles list_major_lists_longer; do
  left=$((540 - SECONDS)); [ $left -lt 15 ] && { echo "not run: $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "$t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
cd $w && tar czf $o/ab.tgz --exclude='*/nv' --exclude='*.ivf' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
for b in prev ord ord512; do echo "== $b"; grep -E "^  ivf_|Duration" $w/ncu-i8-$b.log | paste - - | awk '{print $1, $(NF-1), $NF}'; done
grep -E "^test |test result|panicked|not run" $w/tests.txt | cut -c1-200
cat $w/times.txt
