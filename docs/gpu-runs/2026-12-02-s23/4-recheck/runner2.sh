#!/usr/bin/env bash
# Session 23, the second recheck: main before (prev), the landed change (cur), and call 1's
# builds of the same kernels (b1: both with LTOKIT_WIP_SEED_WARPS=1, b4: =4), three rounds
# interleaved; then ncu durations without clock locking or cache flushes of prev and cur
# (lowdim-i8 × 10), to see whether the seed and scan run as they do under ncu's defaults.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s23e
b=gpu-run/bin
cp $b/ltokit-new $b/ltokit-cur; cp $b/ivf-new.ltkb $b/ivf-cur.ltkb
for w in 1 4; do
  printf '#!/bin/sh\nexec env LTOKIT_WIP_SEED_WARPS=%s "$(dirname "$0")/ltokit-both" "$@"\n' $w > $b/ltokit-b$w
  chmod +x $b/ltokit-b$w; cp $b/ivf-both.ltkb $b/ivf-b$w.ltkb
done
SETS="lowdim-i8 lowdim-f16" ROUNDS=3 bash scripts/gpu-ab.sh $W prev cur b1 b4 > $OUT/ab.log 2>&1
for bld in prev cur b1; do
  # shellcheck disable=SC2046
  timeout 60 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
    -k regex:'ivf_(lmscan|lmseed)' $b/ltokit-$bld $(bench_args $bld lowdim-i8 1024 10) > $W/timeline-free-$bld.csv 2>/dev/null
done
runner_finish
