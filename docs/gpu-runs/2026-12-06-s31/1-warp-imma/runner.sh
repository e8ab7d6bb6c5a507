#!/usr/bin/env bash
# Session 31, call 1 (about 580 s, `gpu-run` carried): two candidates against main's tip
# (`prev`), built by docs/gpu-runs/2026-12-06-s30/build-next.sh (prev, imma) and
# `TESTS=1 bash scripts/gpu-build-variants.sh lmwarp=docs/wip/lmwarp.patch`:
# - `lmwarp`: the warp scan of 8-bit lists (kernels/lmwarp.cu), which ScanForm::Auto takes
#   for every 8-bit mma shape of whole 16-byte chunks up to k 32;
# - `imma`: docs/wip/coarse-imma.patch, the 8-bit queries' score matrix on integer tensor
#   cores.
# First the GPU tests that take each (the test cache warmed as session 28's recipe does),
# then an A/B of the three on the 8-bit sets, then ncu timelines of lmwarp.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s31a
cache=${TMPDIR:-/tmp}/ltokit-ivf-gpu-test-cache
gpu-run/bin/ltokit-lmwarp bundle inspect gpu-run/bin/ivf-lmwarp.ltkb | awk '$1 == "plan" {print $2}' > $W/all-plans.txt
{ grep -E '_c(1|16|128|1024)_' $W/all-plans.txt | grep -vE '_d(96|100|200|256|384)_'
  grep -vE '^(lmscan|lmwarp|scan)_' $W/all-plans.txt | grep -vE '_c(1|16|128|1024)_'; } | sort -u > $W/test-plans.txt
timeout 90 gpu-run/bin/ltokit-lmwarp warmup --bundle gpu-run/bin/ivf-lmwarp.ltkb --arch native --jobs 16 \
  --plans $W/test-plans.txt --cache-dir "$cache" > $W/warmup.txt 2>&1
echo "warmup at $SECONDS s: $(tail -n 1 $W/warmup.txt)" >> $W/times.txt
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-lmwarp $W 250 list_major_tiles \
  list_major_lists_longer large_batches small_batches_split device_resident list_major_bounds_seeded
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-imma $W 300 large_batches small_batches_split
SETS="lowdim-i8 images wide-i8" ROUNDS=2 timeout $((520 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev lmwarp imma > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
timeline lmwarp lowdim-i8 1024 10 550; timeline lmwarp images 256 10 580
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
