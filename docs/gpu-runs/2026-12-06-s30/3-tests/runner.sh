#!/usr/bin/env bash
# Session 30, call 3 (after session 29's planned calls 1 and 2 ran as this session's
# calls 1 and 2): the fix of `coarse_select_c1024` (four queries a block; call 2's warmup
# found it did not link on the H100) on main's tip `prev` (`TESTS=1 bash
# scripts/gpu-build-variants.sh prev=`): the test cache warmed with every plan of capacity
# 1, 16, 128 or 1,024 and every non-scan plan (the warmup must link all of them now),
# then the coarse-search tests, which probe 590 lists too (capacity 1,024), and two
# end-to-end ones.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s30a
cache=${TMPDIR:-/tmp}/ltokit-ivf-gpu-test-cache
gpu-run/bin/ltokit-prev bundle inspect gpu-run/bin/ivf-prev.ltkb | awk '$1 == "plan" {print $2}' > $W/all-plans.txt
{ grep -E '_c(1|16|128|1024)_' $W/all-plans.txt | grep -vE '_d(96|100|200|256|384)_'
  grep -vE '^(lmscan|scan)_' $W/all-plans.txt | grep -vE '_c(1|16|128|1024)_'; } | sort -u > $W/test-plans.txt
gpu-run/bin/ltokit-prev warmup --bundle gpu-run/bin/ivf-prev.ltkb --arch native --jobs 16 \
  --plans $W/test-plans.txt --cache-dir "$cache" > $W/warmup.txt 2>&1
echo "warmup at $SECONDS s: $(head -n 1 $W/warmup.txt)" >> $W/times.txt
cp $W/warmup.txt "$OUT/"
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-prev $W 230 large_batches small_batches_split \
  probing_every_list device_resident eight_bit_distances
runner_finish
