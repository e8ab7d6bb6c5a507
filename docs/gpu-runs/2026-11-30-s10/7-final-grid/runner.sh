#!/usr/bin/env bash
# Session 10, final call: cuVS 26.10 and ltokit side by side on the same files in one call
# (scripts/gpu-bench-vs-cuvs.sh), auto scan, batches 10,000 and 1,000 — ltokit's index
# built on the device; then the GPU tests of the list-major tiles and the quick set on
# this build.
set -u
SECONDS=0
o=$OUT; w=/tmp/g; mkdir -p $w
mkdir -p /root/cuvs && cp gpu-run/cuvs-p5 /root/cuvs/p5
ls /root/cuvs > $w/chunks.txt
SCANS=auto BATCH=10000 timeout 230 bash scripts/gpu-bench-vs-cuvs.sh $w/b10k \
  lowdim:1024:5,10,20,30,50,100 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 > $w/b10k.log 2>&1
echo "10k at $SECONDS s" >> $w/times.txt
SCANS=auto BATCH=1000 timeout $((330 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $w/b1k \
  lowdim:1024:5,10,20,50 lowdim-f16:1024:10,20 lowdim-i8:1024:10,20 images:256:2,5,10 > $w/b1k.log 2>&1
echo "1k at $SECONDS s" >> $w/times.txt
( timeout $((560 - SECONDS)) gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture list_major_tiles device_resident large_batches small_batches_split an_index_built probing_every_list a_non_finite ) > $w/tests.txt 2>&1
echo "tests at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/g.tgz --exclude='*/nv' . && cd - > /dev/null
for b in b10k b1k; do echo "== $b"; cat $w/$b/summary.md 2>/dev/null | cut -c1-220; tail -3 $w/$b.log; done
grep -E "^test |test result|panicked" $w/tests.txt | cut -c1-200
cat $w/times.txt
