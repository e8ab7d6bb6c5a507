#!/usr/bin/env bash
# Session 16, call 2: A/B of main (`prev`) against `seed` (the list-major seed sorts scores
# alone, no row ids; a warp's first group is its list; later groups merged only where a
# row beats the k-th), `seedsel` (seed + the coarse selection's bound from a sort of the
# lanes' minima instead of a 32-round bitwise select, n_probes ≤ 32) and `seed512` (seed
# + 64 KiB of rows a query's seed reads, up to 512 rows); six sets, three rounds. Then
# seed's seeded and list-major GPU tests, and the seed and selection kernels' durations
# (ncu) in prev, seed and seedsel's searches of lowdim-i8 × 10.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab2; mkdir -p $w gpu-run/bin
tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
SETS="lowdim-i8 lowdim-f16 wide-i8 wide-f16 images lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $w prev seed seedsel seed512 > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
for t in list_major_bounds_seeded list_major_tiles; do
  left=$((480 - SECONDS)); [ $left -lt 60 ] && { echo "not run: seed $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ivf-seed --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "seed $t exit $? at $SECONDS s" >> $w/times.txt
done
cp $w/tests.txt $o/
d=/tmp/bench-data
for build in prev seed seedsel; do
  left=$((585 - SECONDS)); [ $left -lt 25 ] && { echo "no timeline: $build" >> $w/times.txt; continue; }
  timeout $left ncu --metrics gpu__time_duration.sum --csv -k regex:'ivf_(lmseed|coarse_select|coarse_scores)' \
    gpu-run/bin/ltokit-$build ivf bench --k 10 --json --cache-dir /tmp/ab-cache-$build --reps 1 --scan list-major \
    --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10 --batch 10000 \
    > $w/timeline-lowdim-i8-$build.csv 2> $w/timeline-lowdim-i8-$build.err
  echo "timeline $build at $SECONDS s" >> $w/times.txt
done
cd $w && tar czf $o/ab2.tgz --exclude='*/nv' --exclude='*.ivf' --exclude='*.npy' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
grep -E "^test |test result|panicked|not run|checked" $w/tests.txt | cut -c1-250
for f in $w/timeline-*.csv; do echo "== $f"; grep -E '"gpu__time_duration.sum"' $f | awk -F'","' '{print $5, $9, $(NF)}' | grep -v "(62500\|(15625" | tail -4; done
cat $w/times.txt
