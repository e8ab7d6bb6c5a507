#!/usr/bin/env bash
# Session 21, call 1: GPU tests of main as landed (prev: device_resident, which takes the
# shared-memory grouping), of `gnl` (group-no-list-start.patch) and of `rep` (replay.patch:
# repeated device-resident searches recorded as a CUDA graph and replayed); then the A/B of
# prev against `addr` (coarse-h16-addr.patch: the f16 score matrix's spill removed), `rows`
# (coarse-h16-rows.patch: addr + conflict-free query stores), `q64`
# (coarse-h16-q64-waves.patch: addr + 64-query tiles where 128-query tiles leave a part-full
# wave), gnl, rep and `norep` (rep with --replay off); six sets, three rounds; ncu durations
# of the score matrix; the score-matrix test (large_batches) on q64.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s21a
printf '#!/bin/sh\nexec "$(dirname "$0")/ltokit-rep" "$@" --replay off\n' > gpu-run/bin/ltokit-norep
chmod +x gpu-run/bin/ltokit-norep; cp gpu-run/bin/ivf-rep.ltkb gpu-run/bin/ivf-norep.ltkb
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-prev $W 40 device_resident
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-rep $W 100 repeated_device_searches device_resident
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-gnl $W 230 device_resident list_major_tiles
SETS="lowdim-i8 images lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $W prev addr rows q64 gnl rep norep > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
for b in prev addr rows q64; do timeline $b images 256 2 540; done
timeline prev lowdim-i8 1024 10 540; timeline q64 lowdim-i8 1024 10 540
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-q64 $W 590 large_batches
runner_finish
