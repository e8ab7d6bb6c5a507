#!/usr/bin/env bash
# Session 18, call 3: A/B of main (prev) against `tseed` (the seed by tile: a block a scan
# tile scores the queries whose first probe its pairs hold, rows shared through L1),
# `tall` (tseed, seeding every type and shape with k <= 32), `stq` (the scan stages two
# queries a warp at a time) and `tstq` (tseed + stq); six sets, three rounds; ncu
# durations; tstq's GPU tests.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab3; mkdir -p $w gpu-run/bin
tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
SETS="lowdim-i8 images lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $w prev tseed tall stq tstq > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
d=/tmp/bench-data
bench() { # build set lists probes
  echo ivf bench --k 10 --json --cache-dir /tmp/ab-cache-$1 --reps 1 --scan list-major \
    --lists $3 --base $d/$2/base.npy --queries $d/$2/queries.npy --probes $4 --batch 10000
}
tl() {  # build set lists probes
  left=$((330 - SECONDS)); [ $left -lt 25 ] && { echo "no timeline: $1 $2" >> $w/times.txt; return; }
  timeout $left ncu --metrics gpu__time_duration.sum --csv -k regex:'ivf_(lmscan|lmseed|coarse_select|coarse_scores|group|merge)' \
    gpu-run/bin/ltokit-$1 $(bench $1 $2 $3 $4) > $w/timeline-$2-$4-$1.csv 2> $w/timeline-$2-$4-$1.err
  echo "timeline $1 $2 $4 at $SECONDS s" >> $w/times.txt
}
tl tseed lowdim-i8 1024 10; tl tall images 256 10; tl stq images 256 2; tl tseed lowdim-f16 1024 10
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-tstq $w 585 list_major_seed_gathers device_resident list_major_tiles list_major_bounds_seeded
cp $w/tests.txt $w/times.txt $o/ 2>/dev/null
cd $w && tar czf $o/ab3.tgz --exclude='*/nv' --exclude='*.ivf' --exclude='*.npy' --exclude='*.ncu-rep' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
grep -E "^test |test result|panicked|not run|checked|match" $w/tests.txt | cut -c1-250
for f in $w/timeline-*.csv; do echo "== $f"; grep -E '"gpu__time_duration.sum"' $f | awk -F'","' '{print $5, $9, $(NF)}' | grep -v "(62500\|(15625" | tail -9; done
cat $w/times.txt
