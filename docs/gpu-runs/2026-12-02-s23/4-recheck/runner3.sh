#!/usr/bin/env bash
# Session 23, the third recheck (another machine): prev, cur (the landed change), b1
# (call 1's both, one warp at every batch) and s1 (seed-min alone, no dp4a3, one warp),
# lowdim-i8 and wide-i8, three rounds; the per-query scan of lowdim-i8 (prev, cur).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s23f
b=gpu-run/bin
cp $b/ltokit-new $b/ltokit-cur; cp $b/ivf-new.ltkb $b/ivf-cur.ltkb
printf '#!/bin/sh\nexec env LTOKIT_WIP_SEED_WARPS=1 "$(dirname "$0")/ltokit-both" "$@"\n' > $b/ltokit-b1
printf '#!/bin/sh\nexec env LTOKIT_WIP_SEED_WARPS=1 "$(dirname "$0")/ltokit-smin" "$@"\n' > $b/ltokit-s1
chmod +x $b/ltokit-b1 $b/ltokit-s1; cp $b/ivf-both.ltkb $b/ivf-b1.ltkb; cp $b/ivf-smin.ltkb $b/ivf-s1.ltkb
SETS="lowdim-i8 wide-i8" ROUNDS=3 bash scripts/gpu-ab.sh $W prev cur b1 s1 > $OUT/ab.log 2>&1
d=/tmp/bench-data; mkdir -p $W/pq
for round in 1 2; do for bld in prev cur; do
  timeout 60 $b/ltokit-$bld ivf bench --k 10 --json --cache-dir /tmp/ab-cache-$bld --reps 3 --scan per-query \
    --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10,20 --batch 1000,100 \
    > $W/pq/lowdim-i8-$bld-$round.json 2> $W/pq/lowdim-i8-$bld-$round.err
done; done
python3 scripts/ab-summary.py $W/pq prev > $W/pq-summary.txt 2>&1
runner_finish
sed -n '/means of the rounds/,$p' $W/pq-summary.txt
