#!/usr/bin/env bash
# Session 11, call 4: integer keep test for 8-bit L2/IP (new) against the gated seed (gate) and main (prev),
# two rounds; ncu regions of new on lowdim-i8; GPU tests of the list-major scan on new.
set -u
SECONDS=0
o=$OUT; w=/tmp/w; d=/tmp/d; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim lowdim-f16 lowdim-i8 images > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
for round in 1 2; do
for bin in prev gate new; do
  exe=gpu-run/bin/ltokit; [ $bin != new ] && exe=gpu-run/bin/ltokit-$bin
  B="$exe ivf bench --k 10 --json --scan list-major --cache-dir /tmp/cb-$bin --reps 3"
  timeout 90 $B --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10,20,50 --batch 10000,1000 > $w/i8-$bin-$round.json 2> $w/i8-$bin-$round.err
  timeout 90 $B --lists 256 --base $d/images/base.npy --queries $d/images/queries.npy --probes 2,5,10,20 --batch 10000,1000 > $w/images-$bin-$round.json 2> $w/images-$bin-$round.err
  timeout 90 $B --lists 1024 --base $d/lowdim-f16/base.npy --queries $d/lowdim-f16/queries.npy --probes 10,20,50 --batch 10000,1000 > $w/f16-$bin-$round.json 2> $w/f16-$bin-$round.err
  timeout 90 $B --lists 1024 --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --probes 5,20,50 --batch 10000,1000 > $w/f32-$bin-$round.json 2> $w/f32-$bin-$round.err
  echo "bench $bin $round at $SECONDS s" >> $w/times.txt
done; done
B="gpu-run/bin/ltokit ivf bench --k 10 --json --cache-dir /tmp/cb-new --reps 1 --scan list-major"
name=lowdim-i8
timeout 120 ncu --section SourceCounters --section WarpStateStats --section Occupancy -k regex:ivf_lmscan --launch-skip 1 --launch-count 1 -o $w/src-$name $B --lists 1024 --base $d/$name/base.npy --queries $d/$name/queries.npy --probes 10 --batch 10000 > $w/ncu-src-$name.log 2>&1
ncu -i $w/src-$name.ncu-rep --page source --csv --print-source sass > $w/sass-$name.csv 2>&1
ncu -i $w/src-$name.ncu-rep --page details > $w/details-$name.txt 2>&1
python3 gpu-run/regions.py $w/sass-$name.csv > $w/regions-$name.txt 2>&1
echo "ncu at $SECONDS s" >> $w/times.txt
( timeout 300 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture list_major ) > $w/tests.txt 2>&1
echo "tests exit $? at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/w.tgz --exclude='*.ncu-rep' . && cd - > /dev/null
grep -E "^test |test result|panicked|checked" $w/tests.txt | cut -c1-250
python3 gpu-run/ab-summary.py $w
cat $w/regions-$name.txt; grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy" $w/details-$name.txt
cat $w/times.txt
