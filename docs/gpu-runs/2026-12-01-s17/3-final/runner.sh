#!/usr/bin/env bash
# Session 17, call 11 (after the cuVS chunks p00–p06 were sent to /root/cuvs/ again):
# main's own build (5a764c1 + docs, scripts/gpu-build.sh) — first the score-matrix
# coarse-search test (the coarse store changed), then cuVS 26.10 and ltokit side by side
# at batch 10,000 (the index builds timed with the build's plans in the kernel cache, as
# scripts/cold-cache.sh means them to be), then the IVF GPU tests the earlier calls left
# out and ltokit's core GPU tests; every part writes under OUT as it ends.
set -u
SECONDS=0
o=$OUT; w=/tmp/final; mkdir -p $w /root/cuvs
cp gpu-run/cuvs-p07 /root/cuvs/p07
t=gpu-run/bin/test-ltokit-ivf-gpu-test
SINCE=$SECONDS bash scripts/gpu-tests.sh $t $o 120 large_batches
SCANS=auto BATCH=10000 timeout 240 bash scripts/gpu-bench-vs-cuvs.sh $w/b10k \
  lowdim:1024:5,10,20,30,50,100 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $o/b10k.log 2>&1
cp $w/b10k/summary.md $o/b10k-summary.md 2>/dev/null
(cd $w && tar czf $o/b10k.tgz --exclude='*/nv' --exclude='*.ivf' b10k)
echo "10k at $SECONDS s" >> $o/times.txt
SINCE=$SECONDS bash scripts/gpu-tests.sh $t $o 330 list_major_lists_longer an_index_built_on_the_device kernels_linked_ahead
timeout 90 gpu-run/bin/test-ltokit-gpu-test --ignored --test-threads=1 > $o/core-gpu-tests.txt 2>&1
echo "core gpu tests exit $? at $SECONDS s" >> $o/times.txt
SINCE=$SECONDS bash scripts/gpu-tests.sh $t $o 590 every_variant
cut -c1-240 $o/b10k-summary.md
grep -E "^test |test result|panicked|not run|checked|match|=" $o/tests.txt | cut -c1-250
grep -E "test result|FAILED|panicked" $o/core-gpu-tests.txt | head
cat $o/times.txt
