#!/usr/bin/env bash
# Session 11, call 2: ncu source counters of the list-major scan with deferred offers
# (i8 10k x 10, images 10k x 2, f16 10k x 10).
set -u
SECONDS=0
o=$OUT; w=/tmp/w; d=/tmp/d; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim-i8 images lowdim-f16 > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
B="gpu-run/bin/ltokit ivf bench --k 10 --json --cache-dir /tmp/cb --reps 1 --scan list-major"
for s in images:256:2 lowdim-i8:1024:10 lowdim-f16:1024:10; do
  IFS=: read -r name lists probes <<< "$s"
  timeout 60 $B --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 > $w/warm-$name.json 2>&1
  timeout 120 ncu --section SourceCounters --section WarpStateStats --section InstructionStats --section SpeedOfLight --section Occupancy --section LaunchStats -k regex:ivf_lmscan --launch-skip 1 --launch-count 1 -o $w/src-$name $B --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 > $w/ncu-src-$name.log 2>&1
  ncu -i $w/src-$name.ncu-rep --page source --csv --print-source sass > $w/sass-$name.csv 2>&1
  ncu -i $w/src-$name.ncu-rep --page details > $w/details-$name.txt 2>&1
  python3 gpu-run/sass-summary.py $w/sass-$name.csv 40 > $w/sass-$name-summary.txt 2>&1
  python3 gpu-run/regions.py $w/sass-$name.csv > $w/regions-$name.txt 2>&1
  echo "ncu $name at $SECONDS s" >> $w/times.txt
done
cd $w && tar czf $o/w.tgz --exclude='*.ncu-rep' . && cd - > /dev/null
for n in images lowdim-i8 lowdim-f16; do echo "== $n"; cat $w/regions-$n.txt; head -4 $w/sass-$n-summary.txt; grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy" $w/details-$n.txt; done
tail -3 $w/ncu-src-images.log
cat $w/times.txt
