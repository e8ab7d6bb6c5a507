#!/usr/bin/env bash
# Session 23, call 1: the A/B of main (prev) against seed-min.patch (each lane of the
# seed keeps the best two bounds of its rows; one sort of each half and a merge a warp
# instead of a sort and merge a 32-row group) and seed-min + dist-dp4a3.patch (`both`:
# 8-bit signed L2 as Σq² + Σx² − 2Σq·x, three dp4a a word), each swept by
# LTOKIT_WIP_SEED_WARPS (1, 2; 4 = main's choice for 256 rows) on four seeded sets, two
# rounds; ncu durations of lowdim-i8 × 10; the per-query scan of lowdim-i8 (d3 changes
# it) at batches 1,000 and 100; the GPU tests of `both` (seeded bounds at 4 and 1 warps a
# query, device-resident).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s23a
b=gpu-run/bin
wrap() { # NAME BASE ENV...
  local name=$1 base=$2; shift 2
  printf '#!/bin/sh\nexec env %s "$(dirname "$0")/ltokit-%s" "$@"\n' "$*" "$base" > $b/ltokit-$name
  chmod +x $b/ltokit-$name
  cp $b/ivf-$base.ltkb $b/ivf-$name.ltkb
  mkdir -p /tmp/ab-cache-$base && ln -sfn /tmp/ab-cache-$base /tmp/ab-cache-$name
}
wrap s1 smin LTOKIT_WIP_SEED_WARPS=1
wrap s2 smin LTOKIT_WIP_SEED_WARPS=2
wrap b1 both LTOKIT_WIP_SEED_WARPS=1
wrap b2 both LTOKIT_WIP_SEED_WARPS=2
wrap b4 both LTOKIT_WIP_SEED_WARPS=4
SETS="lowdim-i8 lowdim-f16 wide-i8 wide-f16" ROUNDS=2 bash scripts/gpu-ab.sh $W prev s1 s2 b4 b1 b2 > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
timeline prev lowdim-i8 1024 10 400; timeline b1 lowdim-i8 1024 10 400; timeline b4 lowdim-i8 1024 10 400
timeline b2 lowdim-i8 1024 10 400
d=/tmp/bench-data; mkdir -p $W/pq
for round in 1 2; do for bld in prev b4; do
  timeout 60 $b/ltokit-$bld ivf bench --k 10 --json --cache-dir /tmp/ab-cache-$bld --reps 3 --scan per-query \
    --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10,20 --batch 1000,100 \
    > $W/pq/lowdim-i8-$bld-$round.json 2> $W/pq/lowdim-i8-$bld-$round.err
done; done
python3 scripts/ab-summary.py $W/pq prev > $W/pq-summary.txt 2>&1
echo "per-query at $SECONDS s" >> $W/times.txt
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-both $W 470 list_major_bounds_seeded device_resident
LTOKIT_WIP_SEED_WARPS=1 SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-both $W 585 list_major_bounds_seeded
runner_finish
sed -n '/means of the rounds/,$p' $W/pq-summary.txt
