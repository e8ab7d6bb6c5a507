#!/usr/bin/env bash
# The first device call of the session after 13 (copy to gpu-run/ and run with gpu-run
# carried): the GPU tests session 13 could not run on main's final build, then an A/B of
# the three prepared patches against main, then the ncu durations of the stages they
# touch. Builds: gpu-run/bin/ltokit-{prev,c3,mregs,sv4,copy8} (scripts/gpu-build-variants.sh
# prev= c3=docs/wip/coarse-h16-3blocks.patch mregs=docs/wip/merge-regs.patch
# sv4=docs/wip/select-vec4.patch copy8=docs/wip/copy-8-threads.patch; TESTS=1 for mregs'
# test binary), main's IVF test binary
# as gpu-run/bin/test-ltokit-ivf-gpu-test.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab; mkdir -p $w
for t in a_plan_loaded_for_a_narrow large_batches_score; do
  ( timeout 120 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "main $t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
SETS="lowdim-i8 images lowdim-f16 lowdim wide-f16 wide-i8" bash scripts/gpu-ab.sh $w prev c3 mregs sv4 copy8 > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
d=/tmp/bench-data
for s in images:256:2 lowdim-i8:1024:10; do
  IFS=: read -r name lists probes <<< "$s"
  for b in prev c3 mregs sv4; do
    L="gpu-run/bin/ltokit-$b ivf"
    [ -f $w/$name.ivf ] || timeout 60 $L build --base $d/$name/base.npy --lists $lists -o $w/$name.ivf --cache-dir /tmp/ab-cache-$b > $w/build-$name.log 2>&1
    timeout 90 ncu --clock-control none --cache-control none --section SpeedOfLight -k 'regex:ivf_(coarse|merge)' \
      $L search --index $w/$name.ivf --queries $d/$name/queries.npy --k 10 --probes $probes --scan list-major \
      --cache-dir /tmp/ab-cache-$b -o /dev/null > $w/ncu-$name-$b.log 2>&1
    echo "ncu $name $b exit $? at $SECONDS s" >> $w/times.txt
  done
done
# What bounds the images scan (session 13's note: 32-query tiles at two blocks an SM,
# about 768 blocks): its stalls, occupancy and waves.
timeout 90 ncu --clock-control none --cache-control none --section SpeedOfLight --section WarpStateStats \
  --section Occupancy --section LaunchStats -k 'regex:ivf_lmscan' gpu-run/bin/ltokit-prev ivf search \
  --index $w/images.ivf --queries $d/images/queries.npy --k 10 --probes 2 --scan list-major \
  --cache-dir /tmp/ab-cache-prev -o /dev/null > $w/ncu-images-scan.log 2>&1
echo "ncu images scan exit $? at $SECONDS s" >> $w/times.txt
for t in device_resident every_variant; do
  left=$((570 - SECONDS)); [ $left -lt 15 ] && { echo "not run: $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ivf-mregs --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "mregs $t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
cd $w && tar czf $o/ab.tgz --exclude='*/nv' --exclude='*.ivf' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
for f in $w/ncu-*.log; do echo "== $f"; grep -E "^  ivf_|Duration" $f | paste - - | awk '{print $1, $(NF)}'; done
grep -E "Duration|Throughput|Occupancy|Waves|Registers|Warp Cycles|Stall|stall" $w/ncu-images-scan.log | head -30
grep -E "^test |test result|panicked|not run" $w/tests.txt | cut -c1-250
cat $w/times.txt
