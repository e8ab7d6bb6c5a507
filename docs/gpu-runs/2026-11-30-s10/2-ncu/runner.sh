#!/usr/bin/env bash
# Session 10, call 2: where the list-major scan's time goes after the cp.async change —
# ncu source counters (SASS) of the images (10,000 × 2 probes) and i8 (10,000 × 10)
# list-major kernels.
set -u
SECONDS=0
o=$OUT; w=/tmp/w; d=/tmp/d; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim-i8 images > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
B="gpu-run/bin/ltokit ivf bench --k 10 --json --cache-dir /tmp/cb --reps 1 --scan list-major"
timeout 60 $B --lists 256 --base $d/images/base.npy --queries $d/images/queries.npy --probes 2 --batch 10000 > $w/warm.json 2>&1
timeout 60 $B --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10 --batch 10000 > $w/warm2.json 2>&1
for s in images:256:2 lowdim-i8:1024:10; do
  IFS=: read -r name lists probes <<< "$s"
  timeout 120 ncu --section SourceCounters --section WarpStateStats --section InstructionStats --section SpeedOfLight --section Occupancy --section LaunchStats -k regex:ivf_lmscan --launch-skip 1 --launch-count 1 -o $w/src-$name $B --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 > $w/ncu-src-$name.log 2>&1
  ncu -i $w/src-$name.ncu-rep --page source --csv --print-source sass > $o/sass-$name.csv 2>&1
  ncu -i $w/src-$name.ncu-rep --page details > $w/details-$name.txt 2>&1
  python3 gpu-run/sass-summary.py $o/sass-$name.csv 30 > $w/sass-$name-summary.txt 2>&1
  echo "ncu $name at $SECONDS s" >> $w/times.txt
done
gzip $o/sass-*.csv
cd $w && tar czf $o/w.tgz --exclude='*.ncu-rep' . && cd - > /dev/null
head -25 $w/sass-images-summary.txt; head -25 $w/sass-lowdim-i8-summary.txt
grep -E "Duration|Registers|Achieved Occupancy|Theoretical Occupancy|Block Limit" $w/details-*.txt
tail -3 $w/ncu-src-images.log
cat $w/times.txt
