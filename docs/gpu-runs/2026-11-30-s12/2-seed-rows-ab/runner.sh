#!/usr/bin/env bash
# Session 12, call 2: A/B of the seed's rows (64/128/256 by a warp a group; o128: the
# seed on for every type and shape at 128 rows) against the landed coarse change, plus
# `new` (64 rows, host path through pinned staging: compare its host QPS with s64's);
# then the GPU tests of the changed paths: ltokit's pinned staging, and the IVF suite
# built with the seed on everywhere at 256 rows (docs/wip/o256.patch).
set -u
SECONDS=0
o=$OUT; w=/tmp/ab; mkdir -p $w
bash scripts/gpu-ab.sh $w coarse s64 s128 s256 o128 new > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
gpu-run/bin/test-ltokit-gpu-test --ignored --test-threads=1 --nocapture pinned > $w/tests.txt 2>&1
echo "pinned exit $? at $SECONDS s" >> $w/times.txt
for t in list_major_bounds_seeded list_major_tiles device_resident list_major_lists_longer large_batches small_batches_split a_non_finite auto_takes probing_every_list kernels_linked_ahead an_index_built small_batches_cut; do
  left=$((560 - SECONDS)); [ $left -lt 15 ] && { echo "not run: $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "$t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
cd $w && tar czf $o/ab.tgz --exclude='*/nv' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
grep -E "^test |test result|panicked|not run|pinned staging" $w/tests.txt | cut -c1-200
cat $w/times.txt
