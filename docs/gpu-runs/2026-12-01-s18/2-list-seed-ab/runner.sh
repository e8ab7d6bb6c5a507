#!/usr/bin/env bash
# Session 18, call 2: A/B of main (prev) against `lseed` (the seed by list: a block a list
# scores the queries whose first probe it is, rows shared through L1) and `lall` (lseed,
# seeding every type and shape with k <= 32), six sets, three rounds; ncu durations;
# a full ncu profile of the images' f16 score matrix; lseed's and lall's GPU tests.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab2; mkdir -p $w gpu-run/bin
tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
SETS="lowdim-i8 images lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $w prev lseed lall > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
d=/tmp/bench-data
bench() { # build set lists probes
  echo ivf bench --k 10 --json --cache-dir /tmp/ab-cache-$1 --reps 1 --scan list-major \
    --lists $3 --base $d/$2/base.npy --queries $d/$2/queries.npy --probes $4 --batch 10000
}
tl() {  # build set lists probes
  left=$((330 - SECONDS)); [ $left -lt 25 ] && { echo "no timeline: $1 $2" >> $w/times.txt; return; }
  timeout $left ncu --metrics gpu__time_duration.sum --csv -k regex:'ivf_(lmscan|lmseed|coarse_select|coarse_scores|group|merge)' \
    gpu-run/bin/ltokit-$1 $(bench $1 $2 $3 $4) > $w/timeline-$2-$4-$1.csv 2> $w/timeline-$2-$4-$1.err
  echo "timeline $1 $2 $4 at $SECONDS s" >> $w/times.txt
}
left=$((330 - SECONDS)); [ $left -gt 25 ] && timeout $left ncu --clock-control none --metrics gpu__time_duration.sum --csv \
  gpu-run/bin/ltokit-prev $(bench prev images 256 2) > $w/timeline-all-images-2-prev.csv 2> $w/timeline-all-images-2-prev.err
tl lseed lowdim-i8 1024 10; tl lseed lowdim-f16 1024 10; tl lall images 256 10; tl prev images 256 10; tl lall lowdim 1024 20; tl prev lowdim 1024 20
left=$((380 - SECONDS)); if [ $left -gt 30 ]; then
  timeout $left ncu --set full --import-source no -k regex:ivf_coarse_scores_h16 --launch-count 1 -o $w/full-img-h16 \
    gpu-run/bin/ltokit-prev $(bench prev images 256 2) > $w/full-img-h16.log 2>&1
  ncu -i $w/full-img-h16.ncu-rep --page raw --csv > $w/full-img-h16-raw.csv 2>&1
  ncu -i $w/full-img-h16.ncu-rep --page details > $w/full-img-h16-details.txt 2>&1
  ncu -i $w/full-img-h16.ncu-rep --page source --csv --print-source sass > $w/full-img-h16-sass.csv 2>&1
  echo "full h16 at $SECONDS s" >> $w/times.txt
fi
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-lseed $w 560 list_major_seed_gathers list_major_bounds_seeded device_resident
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-lall $w 585 device_resident list_major_seed_gathers
cp $w/tests.txt $w/times.txt $o/ 2>/dev/null
cd $w && tar czf $o/ab2.tgz --exclude='*/nv' --exclude='*.ivf' --exclude='*.npy' --exclude='*.ncu-rep' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
grep -E "^test |test result|panicked|not run|checked|match" $w/tests.txt | cut -c1-250
for f in $w/timeline-*.csv; do echo "== $f"; grep -E '"gpu__time_duration.sum"' $f | awk -F'","' '{print $5, $9, $(NF)}' | grep -v "(62500\|(15625" | tail -9; done
cat $w/times.txt
