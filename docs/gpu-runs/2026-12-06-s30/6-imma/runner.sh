#!/usr/bin/env bash
# Planned for session 31 (about 400 s, `gpu-run` carried): docs/wip/coarse-imma.patch — the
# 8-bit queries' score matrix on the integer tensor cores — against main. Build both with
#   rm -rf gpu-run/bin && TESTS=1 bash scripts/gpu-build-variants.sh prev= imma=docs/wip/coarse-imma.patch
#   tar cJf gpu-run/bins.tar.xz -C gpu-run/bin . && rm -rf gpu-run/bin
# First the GPU tests that take the score matrix for 8-bit queries (the f16-split tests
# now take the limbs: u8 × 40, i8 × 136, 952 / 2,000 / 4,000 queries, 601 centres), then
# an A/B on the 8-bit sets and ncu timelines of images × 2 and lowdim-i8 × 10. If the
# tests pass and the A/B wins, run the cuVS call with BUILDS="prev imma"
# (docs/gpu-runs/2026-12-06-s30/4-cuvs/runner.sh).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s31a
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-imma $W 150 large_batches small_batches_split \
  device_resident probing_every_list repeated_device
SETS="images lowdim-i8 wide-i8" ROUNDS=3 timeout $((330 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev imma > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
timeline prev images 256 2 390; timeline imma images 256 2 390
timeline prev lowdim-i8 1024 10 390; timeline imma lowdim-i8 1024 10 390
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
