#!/usr/bin/env bash
# Session 18, call 1: A/B of main (prev) against `sel` (coarse-select-regs.patch), six sets,
# three rounds; ncu durations of the coarse selection of both; full ncu profiles (stall
# reasons, per-SASS samples) of prev's images × 2 and lowdim-i8 × 10 kernels; sel's tests.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab1; mkdir -p $w gpu-run/bin
tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
SETS="lowdim-i8 images lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $w prev sel > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
d=/tmp/bench-data
bench() { # build set lists probes
  echo ivf bench --k 10 --json --cache-dir /tmp/ab-cache-$1 --reps 1 --scan list-major \
    --lists $3 --base $d/$2/base.npy --queries $d/$2/queries.npy --probes $4 --batch 10000
}
tl() {  # build set lists probes
  left=$((300 - SECONDS)); [ $left -lt 25 ] && { echo "no timeline: $1 $2" >> $w/times.txt; return; }
  timeout $left ncu --metrics gpu__time_duration.sum --csv -k regex:'ivf_(lmscan|lmseed|coarse_select|coarse_scores|group|merge)' \
    gpu-run/bin/ltokit-$1 $(bench $1 $2 $3 $4) > $w/timeline-$2-$1.csv 2> $w/timeline-$2-$1.err
  echo "timeline $1 $2 at $SECONDS s" >> $w/times.txt
}
for b in prev sel; do tl $b lowdim-i8 1024 10; tl $b images 256 2; done
full() { # set lists probes kernel-regex tag
  left=$((470 - SECONDS)); [ $left -lt 30 ] && { echo "no full: $5" >> $w/times.txt; return; }
  timeout $left ncu --set full --import-source no -k regex:"$4" --launch-skip 2 --launch-count 1 -o $w/full-$5 \
    gpu-run/bin/ltokit-prev $(bench prev $1 $2 $3) > $w/full-$5.log 2>&1
  ncu -i $w/full-$5.ncu-rep --page raw --csv > $w/full-$5-raw.csv 2>&1
  ncu -i $w/full-$5.ncu-rep --page details > $w/full-$5-details.txt 2>&1
  ncu -i $w/full-$5.ncu-rep --page source --csv --print-source sass > $w/full-$5-sass.csv 2>&1
  echo "full $5 at $SECONDS s" >> $w/times.txt
}
full images 256 2 'ivf_lmscan' img-scan
full images 256 2 'ivf_coarse_scores' img-coarse
full lowdim-i8 1024 10 'ivf_lmscan' i8-scan
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-sel $w 580 large_batches small_batches_split device_resident probing_every_list
cp $w/tests.txt $w/times.txt $o/ 2>/dev/null
cd $w && tar czf $o/ab1.tgz --exclude='*/nv' --exclude='*.ivf' --exclude='*.npy' --exclude='*.ncu-rep' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
grep -E "^test |test result|panicked|not run|checked|match" $w/tests.txt | cut -c1-250
for f in $w/timeline-*.csv; do echo "== $f"; grep -E '"gpu__time_duration.sum"' $f | awk -F'","' '{print $5, $9, $(NF)}' | grep -v "(62500\|(15625" | tail -9; done
ls -la $w/full-* ; head -c 600 $w/full-img-scan-sass.csv
cat $w/times.txt
