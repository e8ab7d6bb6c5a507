#!/usr/bin/env bash
# Session 32, call 6 (the device time left, about 300 s; `gpu-run` carried with main's tip
# `1bd367c` built as `tip` by `TESTS=1 bash scripts/gpu-build-variants.sh tip=`): the
# list-major GPU tests after the seed's launch and the scan's launch moved into helpers
# (list_major/seed.rs, `launch_scan`), the test cache warmed with their plans first.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s32f
b=gpu-run/bin
cache=${TMPDIR:-/tmp}/ltokit-ivf-gpu-test-cache
$b/ltokit-tip bundle inspect $b/ivf-tip.ltkb | awk '$1 == "plan" {print $2}' > $W/all-plans.txt
{ grep -E '^lmscan_(o3_|o4_)?c(16|32|128)_(i8tc_d64|u8tc_d96|u8tcw_d96|i8tcw_d64|f16tc|f16tcw)_' $W/all-plans.txt
  grep -E '^lmseed_' $W/all-plans.txt
  grep -E '^lmscan_c(1|16|128|1024)_(u8|i8)tcw?_d(512|784)_' $W/all-plans.txt
  grep -E '_c(1|16|128|1024)_' $W/all-plans.txt | grep -vE '_d(96|100|200|256|384|512|784)_'
  grep -vE '^(lmscan|lmwarp|scan)_' $W/all-plans.txt | grep -vE '_c(1|16|128|1024)_'; } | sort -u > $W/test-plans.txt
timeout 85 $b/ltokit-tip warmup --bundle $b/ivf-tip.ltkb --arch native --jobs 16 \
  --plans $W/test-plans.txt --cache-dir "$cache" > $W/warmup.txt 2>&1
echo "warmup at $SECONDS s: $(tail -n 1 $W/warmup.txt)" >> $W/times.txt
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-tip $W 220 list_major_bounds_seeded list_major_tiles \
  device_resident
runner_finish
