#!/usr/bin/env bash
# Session 16, call 1: the fused coarse product and selection (branch coarse-top, `top`:
# 128-query tiles at three blocks an SM) against main (`prev`), and two forms of it —
# `top2` (128-query tiles at two blocks an SM: no spill) and `top1k` (batches too small
# for the f16 score matrix, 1,000 here, fused in 64-query tiles instead of the 2xTF32
# matrix). First top's coarse-search and device-resident GPU tests, then the A/B: four
# sets, two rounds, builds interleaved (scripts/gpu-ab.sh).
set -u
SECONDS=0
o=$OUT; w=/tmp/ab1; mkdir -p $w gpu-run/bin
tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
for t in large_batches_score_every_centre small_batches_split_the_coarse device_resident_search probing_every_list; do
  left=$((130 - SECONDS)); [ $left -lt 10 ] && { echo "not run: $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ivf-top --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "top $t exit $? at $SECONDS s" >> $w/times.txt
done
cp $w/tests.txt $o/
SETS="images lowdim-i8 lowdim-f16 wide-i8" ROUNDS=2 bash scripts/gpu-ab.sh $w prev top top2 top1k > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
# Each kernel's duration in top's and prev's searches (ncu, one metric; the stages' own
# timers put host synchronisations between stages).
d=/tmp/bench-data
for s in images:256:2 lowdim-i8:1024:10; do
  IFS=: read -r name lists probes <<< "$s"
  for build in top prev; do
    left=$((575 - SECONDS)); [ $left -lt 30 ] && { echo "no timeline: $name $build" >> $w/times.txt; continue; }
    timeout $left ncu --metrics gpu__time_duration.sum --csv -k regex:'ivf_(coarse|group|lmseed|lmscan|merge)' \
      gpu-run/bin/ltokit-$build ivf bench --k 10 --json --cache-dir /tmp/ab-cache-$build --reps 1 --scan list-major \
      --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 \
      > $w/timeline-$name-$build.csv 2> $w/timeline-$name-$build.err
    echo "timeline $name $build at $SECONDS s" >> $w/times.txt
  done
done
cd $w && tar czf $o/ab1.tgz --exclude='*/nv' --exclude='*.ivf' --exclude='*.npy' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
grep -E "^test |test result|panicked|not run|checked|probes|searches" $w/tests.txt | cut -c1-250
for f in $w/timeline-*.csv; do echo "== $f"; grep -E '"gpu__time_duration.sum"' $f | awk -F'","' '{print $5, $(NF)}' | tail -12; done
cat $w/times.txt
