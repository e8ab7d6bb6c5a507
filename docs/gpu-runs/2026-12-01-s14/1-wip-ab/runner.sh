#!/usr/bin/env bash
# Session 14, call 1: main's unverified GPU tests, an A/B of main against the prepared
# patches (tile-order, lm-seed (with tile-order), coarse-h16-3blocks, merge-regs, select-vec4, copy-8-threads), how
# the list-major scan's work spreads over its blocks (scripts/list-work.py), and ncu of
# the coarse, merge and images scan kernels.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab; mkdir -p $w
mkdir -p gpu-run/bin; if [ -f gpu-run/bins.tar.xz ]; then tar xJf gpu-run/bins.tar.xz -C gpu-run/bin; fi
ls gpu-run/bin > $w/bins.txt
for t in a_plan_loaded_for_a_narrow large_batches_score; do
  ( timeout 120 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "main $t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
SETS="lowdim-i8 images lowdim-f16 lowdim wide-f16 wide-i8" bash scripts/gpu-ab.sh $w new tord lms c3 mregs sv4 copy8 > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt; cp $w/times.txt $o/
d=/tmp/bench-data
for s in images:256 lowdim-i8:1024 wide-i8:512 lowdim:1024; do
  IFS=: read -r name lists <<< "$s"
  timeout 90 gpu-run/bin/ltokit ivf build --base $d/$name/base.npy --lists $lists -o $w/$name.ivf --cache-dir /tmp/ab-cache-new > $w/build-$name.log 2>&1
done
for s in images:2,5,20:32 lowdim-i8:10,50:64 wide-i8:10:32 lowdim:5,20:64; do
  IFS=: read -r name probes qt <<< "$s"
  for p in ${probes//,/ }; do timeout 60 python3 scripts/list-work.py $w/$name.ivf $d/$name/queries.npy $p $qt >> $w/list-work.txt 2>&1; done
done
echo "list-work at $SECONDS s" >> $w/times.txt; cp $w/list-work.txt $w/times.txt $o/
for s in images:2 lowdim-i8:10; do
  IFS=: read -r name probes <<< "$s"
  for b in new tord lms c3 mregs sv4; do
    L=gpu-run/bin/ltokit-$b; [ $b = new ] && L=gpu-run/bin/ltokit
    timeout 90 ncu --clock-control none --cache-control none --section SpeedOfLight -k 'regex:ivf_(coarse|merge|lmscan|group)' \
      $L ivf search --index $w/$name.ivf --queries $d/$name/queries.npy --k 10 --probes $probes --scan list-major \
      --cache-dir /tmp/ab-cache-$b -o /dev/null > $w/ncu-$name-$b.log 2>&1
    echo "ncu $name $b exit $? at $SECONDS s" >> $w/times.txt
  done
done
timeout 90 ncu --clock-control none --cache-control none --section SpeedOfLight --section WarpStateStats \
  --section Occupancy --section LaunchStats --section SchedulerStats -k 'regex:ivf_lmscan' gpu-run/bin/ltokit ivf search \
  --index $w/images.ivf --queries $d/images/queries.npy --k 10 --probes 2 --scan list-major \
  --cache-dir /tmp/ab-cache-new -o /dev/null > $w/ncu-images-scan.log 2>&1
echo "ncu images scan exit $? at $SECONDS s" >> $w/times.txt
for t in list_major_bounds_seeded list_major_tiles device_resident large_batches; do
  left=$((565 - SECONDS)); [ $left -lt 15 ] && { echo "not run: lms $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ivf-lms --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "lms $t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
cd $w && tar czf $o/ab.tgz --exclude='*/nv' --exclude='*.ivf' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
cat $w/list-work.txt
for f in $w/ncu-*-*.log; do echo "== $f"; grep -E "^  ivf_|Duration" $f | paste - - | awk '{print $1, $(NF)}'; done
grep -E "Duration|Throughput|Occupancy|Waves|Registers|Warp Cycles|Stall|stall|Eligible|Issued" $w/ncu-images-scan.log | head -40
grep -E "^test |test result|panicked|not run" $w/tests.txt | cut -c1-250
cat $w/times.txt
