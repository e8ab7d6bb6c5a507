#!/usr/bin/env bash
# Session 12, call 3: A/B of the candidate room as a constant of each tile fragment
# (docs/wip/cand-cap-const.patch: 96 for the f16 and 8-bit register tiles, 80 for f32's
# and the cp.async tiles) against main (1a4bf47); ncu durations of the stages beside the
# scan (coarse score matrix and selection, grouping, seed, merge) for images x 2 and
# i8 x 10 at batch 10,000; then the GPU tests of the list-major scan on the patched build.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab; mkdir -p $w
bash scripts/gpu-ab.sh $w prev capc > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
d=/tmp/bench-data
for s in images:256:2 lowdim-i8:1024:10; do
  IFS=: read -r name lists probes <<< "$s"
  L="gpu-run/bin/ltokit-prev ivf"
  timeout 60 $L build --base $d/$name/base.npy --lists $lists -o $w/$name.ivf --cache-dir /tmp/ab-cache-prev > $w/build-$name.log 2>&1
  # One search in its own process: every kernel of these stages is the search's.
  timeout 120 ncu --section SpeedOfLight --section LaunchStats -k 'regex:ivf_(coarse|group|lmseed|merge)' \
    $L search --index $w/$name.ivf --queries $d/$name/queries.npy --k 10 --probes $probes --scan list-major \
    --cache-dir /tmp/ab-cache-prev -o /dev/null > $w/ncu-$name.log 2>&1
  echo "ncu $name exit $? at $SECONDS s" >> $w/times.txt
done
for t in list_major_tiles list_major_bounds_seeded list_major_lists_longer small_batches_cut device_resident; do
  left=$((560 - SECONDS)); [ $left -lt 15 ] && { echo "not run: $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "$t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
cd $w && tar czf $o/ab.tgz --exclude='*/nv' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
for n in images lowdim-i8; do echo "== $n"; grep -E "^  ivf_|Duration" $w/ncu-$n.log | paste - - | awk '{print $1, $(NF-1), $NF}'; tail -2 $w/ncu-$n.log; done
grep -E "^test |test result|panicked|not run" $w/tests.txt | cut -c1-200
cat $w/times.txt
