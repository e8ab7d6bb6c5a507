#!/usr/bin/env bash
# Session 32, call 4 (about 250 s, `gpu-run` carried: `TESTS=1 bash scripts/gpu-build-variants.sh
# sshort=docs/wip/select-sort.patch`, then `bash scripts/gpu-build-variants.sh prev=` on main
# `52413df`): the coarse selection of rows of up to 256 centres and up to 16 probes by a sort
# of each lane's eight centres and n_probes rounds of the warp's smallest head. Its GPU
# tests first, then the A/B, then ncu timelines.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s32d
b=gpu-run/bin
cache=${TMPDIR:-/tmp}/ltokit-ivf-gpu-test-cache
$b/ltokit-sshort bundle inspect $b/ivf-sshort.ltkb | awk '$1 == "plan" {print $2}' > $W/all-plans.txt
{ grep -vE '^(lmscan|lmwarp|scan)_' $W/all-plans.txt | grep -vE '_c(1|16|128|1024)_'
  grep -E '^coarse' $W/all-plans.txt; } | sort -u > $W/test-plans.txt
timeout 60 $b/ltokit-sshort warmup --bundle $b/ivf-sshort.ltkb --arch native --jobs 16 \
  --plans $W/test-plans.txt --cache-dir "$cache" > $W/warmup.txt 2>&1
echo "warmup at $SECONDS s: $(tail -n 1 $W/warmup.txt)" >> $W/times.txt
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-sshort $W 170 large_batches small_batches_split \
  device_resident probing_every_list
SETS="images lowdim-i8" ROUNDS=3 timeout $((300 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev sshort > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
timeline prev images 256 2 340; timeline sshort images 256 2 350; timeline sshort images 256 10 360
timeline sshort images 256 5 370
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
