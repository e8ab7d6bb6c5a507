#!/usr/bin/env bash
# Session 15, call 2: A/B of main (prev) against: iep2 (the integer keep test for 8-bit
# mma tiles, its bounds kept only by those tiles), kw (iep2 + warp-aggregated candidate
# reservations), kws (kw + 32-bit row ids in the warp sort), f16a (kws + f16 rows by
# cp.async in the register-capped kernels, three or four blocks an SM); six bench sets,
# three rounds; then f16a's list-major GPU tests against the CPU reference; ncu of the
# f16 scan as f16a runs it.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab2; mkdir -p $w gpu-run/bin
tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
SETS="images lowdim-i8 lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $w prev iep2 kw kws f16a > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
for t in list_major_tiles list_major_bounds_seeded; do
  left=$((430 - SECONDS)); [ $left -lt 50 ] && { echo "not run: f16a $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ivf-f16a --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "f16a $t exit $? at $SECONDS s" >> $w/times.txt
done
cp $w/tests.txt $o/ 2>/dev/null
d=/tmp/bench-data
for s in lowdim-f16:1024:10:f16a images:256:2:kws; do
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
cd $w && tar czf $o/ab2.tgz --exclude='*.ncu-rep' --exclude='*.csv' --exclude='*/nv' --exclude='*.ivf' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
grep -E "^test |test result|panicked|not run|checked" $w/tests.txt | cut -c1-250
for n in lowdim-f16 images; do echo "== $n"; cat $w/regions-$n.txt 2>/dev/null; head -3 $w/sass-$n-summary.txt 2>/dev/null
  grep -E "Duration|Registers Per|Achieved Occupancy|Dynamic Shared" $w/details-$n.txt 2>/dev/null; done
cat $w/times.txt
