#!/usr/bin/env bash
# Session 29, its one call (the session had 392 s of device time left: about 220 s of
# commands after the machine's start). A/B of main's tip (`prev`, `7651bf6`) against
# docs/wip/late-rest.patch (`late`), docs/wip/int-ids.patch (`ints`) and
# docs/wip/select-short.patch (`short`) — session 28's planned call 1 cut to the four sets
# where the misses of issue 11 are (images, lowdim-i8) and two guards (lowdim-f16,
# lowdim f32), two rounds; then the quick IVF GPU tests of prev (main's host changes since
# `f228f11` had not run on a GPU) until 200 s.
# Build: TESTS=1 bash scripts/gpu-build-variants.sh prev=; bash scripts/gpu-build-variants.sh
#   late=docs/wip/late-rest.patch ints=docs/wip/int-ids.patch short=docs/wip/select-short.patch;
#   tar cJf gpu-run/bins.tar.xz -C gpu-run/bin .
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s29a
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$W/gpu.txt" 2>&1
SETS="images lowdim-i8 lowdim-f16 lowdim" ROUNDS=2 timeout 165 \
  bash scripts/gpu-ab.sh "$W/ab" prev late ints short > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
SINCE=$SECONDS MIN_LEFT=8 bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-prev "$W" 200 \
  device_resident kernels_linked_ahead an_index_built a_non_finite_query
runner_finish
cat "$W/gpu.txt"
