#!/usr/bin/env bash
# Session 12, final call: cuVS 26.10 and ltokit side by side on the same files in one call
# (scripts/gpu-bench-vs-cuvs.sh), auto scan, batches 10,000 and 1,000, on main 9253890
# (coarse two-product score matrix, seed of 32 KiB a query by a warp a group, candidate
# room per tile fragment, host path through pinned staging); then the GPU tests not yet
# run on these kernels, every_variant last with what time is left.
set -u
SECONDS=0
o=$OUT; w=/tmp/g; mkdir -p $w
mkdir -p /root/cuvs && cp gpu-run/cuvs-p06 /root/cuvs/p06
ls /root/cuvs > $w/chunks.txt
SCANS=auto BATCH=10000 timeout 230 bash scripts/gpu-bench-vs-cuvs.sh $w/b10k \
  lowdim:1024:5,10,20,30,50,100 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 > $w/b10k.log 2>&1
echo "10k at $SECONDS s" >> $w/times.txt; cp $w/b10k/summary.md $o/summary-10k.md 2>/dev/null
SCANS=auto BATCH=1000 timeout $((330 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $w/b1k \
  lowdim:1024:5,10,20,50 lowdim-f16:1024:10,20 lowdim-i8:1024:10,20 images:256:2,5,10 > $w/b1k.log 2>&1
echo "1k at $SECONDS s" >> $w/times.txt; cp $w/b1k/summary.md $o/summary-1k.md 2>/dev/null
gpu-run/bin/test-ltokit-gpu-test --ignored --test-threads=1 --nocapture pinned > $w/tests.txt 2>&1
echo "pinned exit $? at $SECONDS s" >> $w/times.txt
for t in large_batches small_batches_split a_non_finite auto_takes probing_every_list kernels_linked_ahead an_index_built every_variant; do
  left=$((450 - SECONDS)); [ $left -lt 15 ] && { echo "not run: $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "$t exit $? at $SECONDS s" >> $w/times.txt; cp $w/tests.txt $w/times.txt $o/
done
cd $w && tar czf $o/g.tgz --exclude='*/nv' --exclude='*.ivf' . && cd - > /dev/null
for b in b10k b1k; do echo "== $b"; cat $w/$b/summary.md 2>/dev/null | cut -c1-240; tail -3 $w/$b.log; done
grep -E "^test |test result|panicked|not run" $w/tests.txt | cut -c1-200
cat $w/times.txt
