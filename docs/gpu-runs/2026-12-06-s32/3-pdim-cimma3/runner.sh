#!/usr/bin/env bash
# Session 32, call 3 (about 450 s, `gpu-run` carried: `TESTS=1 bash scripts/gpu-build-variants.sh
# both=docs/wip/pdim.patch+docs/wip/cimma3.patch`, then `bash scripts/gpu-build-variants.sh
# prev= pdim=docs/wip/pdim.patch cimma3=docs/wip/cimma3.patch`):
# - pdim: the plain list-major kernel's 8-bit mma tiles linked for the images' 784 and
#   wide-i8's 512 dimensions (lmdim_784, lmdim_512) up to k 32;
# - cimma3: the 8-bit score matrix copying the queries with cp.async, three stages deep;
# - both.
# GPU tests of `both` first (the test cache warmed with their plans), then the A/B, then
# ncu timelines.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s32c
b=gpu-run/bin
cache=${TMPDIR:-/tmp}/ltokit-ivf-gpu-test-cache
$b/ltokit-both bundle inspect $b/ivf-both.ltkb | awk '$1 == "plan" {print $2}' > $W/all-plans.txt
{ grep -E '^lmscan_c(1|16|128|1024)_(u8|i8)tcw?_d(512|784)_' $W/all-plans.txt
  grep -E '_c(1|16|128|1024)_' $W/all-plans.txt | grep -vE '_d(96|100|200|256|384|512|784)_'
  grep -vE '^(lmscan|lmwarp|scan)_' $W/all-plans.txt | grep -vE '_c(1|16|128|1024)_'; } | sort -u > $W/test-plans.txt
timeout 100 $b/ltokit-both warmup --bundle $b/ivf-both.ltkb --arch native --jobs 16 \
  --plans $W/test-plans.txt --cache-dir "$cache" > $W/warmup.txt 2>&1
echo "warmup at $SECONDS s: $(tail -n 1 $W/warmup.txt)" >> $W/times.txt
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-both $W 260 large_batches small_batches_split \
  device_resident probing_every_list list_major_tiles
SETS="images wide-i8 lowdim-i8" ROUNDS=3 timeout $((470 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev pdim cimma3 both > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
timeline both images 256 2 540; timeline both images 256 10 555; timeline both wide-i8 512 10 570
timeline both lowdim-i8 1024 10 585
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
