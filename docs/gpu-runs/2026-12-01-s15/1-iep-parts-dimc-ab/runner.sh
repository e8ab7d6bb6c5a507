#!/usr/bin/env bash
# Session 15, call 1: A/B of main (prev) against the integer keep test for 8-bit tiles
# (iep), that plus steps copied in parts for wide 8-bit rows (parts), and that plus the
# dimension as a compile-time constant for 128 and 784 (dimc, an experiment), five sets,
# three rounds; the list-major GPU tests of `parts` against the CPU reference; ncu of the
# images scan as `parts` runs it and of the i8 scan as `dimc` runs it.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab1; mkdir -p $w gpu-run/bin
tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
SETS="images lowdim-i8 wide-i8 lowdim-f16 lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $w prev iep parts dimc > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
for t in list_major_tiles list_major_bounds_seeded; do
  left=$((420 - SECONDS)); [ $left -lt 50 ] && { echo "not run: parts $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ivf-parts --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "parts $t exit $? at $SECONDS s" >> $w/times.txt
done
cp $w/tests.txt $o/ 2>/dev/null
d=/tmp/bench-data
for s in images:256:2:parts lowdim-i8:1024:10:dimc; do
  IFS=: read -r name lists probes build <<< "$s"
  left=$((570 - SECONDS)); [ $left -lt 40 ] && { echo "no profile: $name" >> $w/times.txt; continue; }
  B="gpu-run/bin/ltokit-$build ivf bench --k 10 --json --cache-dir /tmp/ab-cache-$build --reps 1 --scan list-major"
  timeout $left ncu --section SourceCounters --section WarpStateStats --section SpeedOfLight --section Occupancy --section LaunchStats -k regex:ivf_lmscan --launch-skip 1 --launch-count 1 -o $w/src-$name $B --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 > $w/ncu-src-$name.log 2>&1
  ncu -i $w/src-$name.ncu-rep --page source --csv --print-source sass > $w/sass-$name.csv 2>&1
  ncu -i $w/src-$name.ncu-rep --page details > $w/details-$name.txt 2>&1
  python3 scripts/sass-summary.py $w/sass-$name.csv 40 > $w/sass-$name-summary.txt 2>&1
  python3 scripts/sass-regions.py $w/sass-$name.csv > $w/regions-$name.txt 2>&1
  echo "ncu $name ($build) at $SECONDS s" >> $w/times.txt
done
cd $w && tar czf $o/ab1.tgz --exclude='*.ncu-rep' --exclude='*.csv' --exclude='*/nv' --exclude='*.ivf' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
grep -E "^test |test result|panicked|not run|checked" $w/tests.txt | cut -c1-250
for n in images lowdim-i8; do echo "== $n"; cat $w/regions-$n.txt 2>/dev/null; head -3 $w/sass-$n-summary.txt 2>/dev/null
  grep -E "Duration|Registers Per|Achieved Occupancy|Dynamic Shared|Executed Ipc A" $w/details-$n.txt 2>/dev/null; done
cat $w/times.txt
