#!/usr/bin/env bash
# Session 14, call 2: the long IVF GPU tests on main's final build (tile order, register
# merge, three-block f16 score matrix), then ncu source counters of the images and i8
# list-major scans as they now run.
set -u
SECONDS=0
o=$OUT; w=/tmp/t2; mkdir -p $w
mkdir -p gpu-run/bin; if [ -f gpu-run/bins.tar.xz ]; then tar xJf gpu-run/bins.tar.xz -C gpu-run/bin; fi
for t in every_variant list_major_tiles list_major_bounds_seeded large_batches; do
  left=$((480 - SECONDS)); [ $left -lt 15 ] && { echo "not run: $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "$t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
d=/tmp/d
python3 scripts/make-bench-data.py $d images lowdim-i8 > $w/data.txt 2>&1
B="gpu-run/bin/ltokit ivf bench --k 10 --json --cache-dir /tmp/cb --reps 1 --scan list-major"
for s in images:256:2 lowdim-i8:1024:10; do
  IFS=: read -r name lists probes <<< "$s"
  left=$((585 - SECONDS)); [ $left -lt 30 ] && { echo "no profile: $name" >> $w/times.txt; continue; }
  timeout $left ncu --section SourceCounters --section WarpStateStats --section SpeedOfLight --section Occupancy --section LaunchStats -k regex:ivf_lmscan --launch-skip 1 --launch-count 1 -o $w/src-$name $B --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 > $w/ncu-src-$name.log 2>&1
  ncu -i $w/src-$name.ncu-rep --page source --csv --print-source sass > $w/sass-$name.csv 2>&1
  ncu -i $w/src-$name.ncu-rep --page details > $w/details-$name.txt 2>&1
  python3 scripts/sass-summary.py $w/sass-$name.csv 40 > $w/sass-$name-summary.txt 2>&1
  python3 scripts/sass-regions.py $w/sass-$name.csv > $w/regions-$name.txt 2>&1
  echo "ncu $name at $SECONDS s" >> $w/times.txt
done
cd $w && tar czf $o/t2.tgz --exclude='*.ncu-rep' --exclude='*.csv' . && cd - > /dev/null
grep -E "^test |test result|panicked|not run" $w/tests.txt | cut -c1-300
for n in images lowdim-i8; do echo "== $n"; cat $w/regions-$n.txt; head -4 $w/sass-$n-summary.txt; grep -E "Duration|Registers Per|Achieved Occupancy" $w/details-$n.txt; done
cat $w/times.txt
