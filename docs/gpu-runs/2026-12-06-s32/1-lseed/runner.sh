#!/usr/bin/env bash
# Session 32, call 1 (about 450 s, `gpu-run` carried: `TESTS=1 bash scripts/gpu-build-variants.sh
# lseed=docs/wip/lseed.patch`, then `bash scripts/gpu-build-variants.sh prev=
# lseed64=docs/wip/lseed64.patch lseedimg=docs/wip/lseedimg.patch`):
# - lseed: the grouped seed of the list-major bounds (the scan's own tiles over the first
#   probes, grouped with the rest, cut at 32 KiB of a list's rows) where a batch has 4 or
#   more queries a list; ivf_lmseed below;
# - lseedg: lseed with --seed grouped (every batch, 1,000 included);
# - lseed64: the grouped seed over 64 KiB of rows;
# - lseedimg: lseed that also seeds where lists are short (the images at 2 and 5 probes).
# GPU tests of lseed first (the test cache warmed with their plans), then the A/B, then
# ncu timelines.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s32a
b=gpu-run/bin
printf '#!/bin/sh\nexec "$(dirname "$0")/ltokit-lseed" "$@" --seed grouped\n' > $b/ltokit-lseedg
chmod +x $b/ltokit-lseedg
cp $b/ivf-lseed.ltkb $b/ivf-lseedg.ltkb
mkdir -p /tmp/ab-cache-lseed && ln -sfn /tmp/ab-cache-lseed /tmp/ab-cache-lseedg
cache=${TMPDIR:-/tmp}/ltokit-ivf-gpu-test-cache
$b/ltokit-lseed bundle inspect $b/ivf-lseed.ltkb | awk '$1 == "plan" {print $2}' > $W/all-plans.txt
{ grep -E '^lmscan_(o3_|o4_)?c(16|32|128)_(i8tc_d64|u8tc_d96|u8tcw_d96|i8tcw_d64|f16tc|f16tcw)_' $W/all-plans.txt
  grep -E '^lmseed_' $W/all-plans.txt
  grep -E '_c(1|16|128|1024)_' $W/all-plans.txt | grep -vE '_d(96|100|200|256|384)_'
  grep -vE '^(lmscan|lmwarp|scan)_' $W/all-plans.txt | grep -vE '_c(1|16|128|1024)_'; } | sort -u > $W/test-plans.txt
timeout 100 $b/ltokit-lseed warmup --bundle $b/ivf-lseed.ltkb --arch native --jobs 16 \
  --plans $W/test-plans.txt --cache-dir "$cache" > $W/warmup.txt 2>&1
echo "warmup at $SECONDS s: $(tail -n 1 $W/warmup.txt)" >> $W/times.txt
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-lseed $W 300 list_major_bounds_seeded \
  list_major_tiles device_resident list_major_lists_longer
SETS="lowdim-i8 lowdim-f16 images" ROUNDS=3 timeout $((480 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev lseed lseedg lseed64 lseedimg > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
timeline prev lowdim-i8 1024 10 560; timeline lseed lowdim-i8 1024 10 560
timeline lseed lowdim-f16 1024 10 570; timeline lseedimg images 256 5 580
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
