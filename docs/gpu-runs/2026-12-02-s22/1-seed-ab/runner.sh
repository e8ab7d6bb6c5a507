#!/usr/bin/env bash
# Session 22, call 1: the GPU tests of main (efa6587: csr, the replay's mends) and of
# seed-lists.patch (the seed by list after the grouping); the A/B of main (prev) against
# the seed by list at its default (2 warps a query, 2 blocks a list) and swept by
# environment (seedp1: 1 warp a query; seeds1 / seeds4: 1 / 4 blocks a list; seedq: the
# seed a query, as main) on five sets, two rounds; ncu durations of lowdim-i8 and
# lowdim-f16 × 10; the first search of wide-f16 from cold caches with debug logs, main
# and link-threads.patch (lt: link-ahead threads by environment, each kernel's load time
# logged).
set -u
. scripts/gpu-runner-lib.sh
. scripts/cold-cache.sh
runner_start /tmp/s22a
b=gpu-run/bin
wrap() { # NAME BASE ENV...
  local name=$1 base=$2; shift 2
  printf '#!/bin/sh\nexec env %s "$(dirname "$0")/ltokit-%s" "$@"\n' "$*" "$base" > $b/ltokit-$name
  chmod +x $b/ltokit-$name
  cp $b/ivf-$base.ltkb $b/ivf-$name.ltkb
}
wrap seedp1 seed LTOKIT_WIP_SEED_PARTS=1
wrap seeds1 seed LTOKIT_WIP_SEED_SPLITS=1
wrap seeds4 seed LTOKIT_WIP_SEED_SPLITS=4
wrap seedq seed LTOKIT_WIP_SEED_FORM=query
wrap lt8 lt LTOKIT_WIP_AHEAD_THREADS=8
wrap lt4 lt LTOKIT_WIP_AHEAD_THREADS=4
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-prev $W 130 repeated_device_searches device_resident large_batches
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-seed $W 200 list_major_bounds_seeded device_resident
SETS="lowdim-i8 lowdim-f16 wide-f16 wide-i8 lowdim" ROUNDS=2 bash scripts/gpu-ab.sh $W prev seed seedp1 seeds1 seeds4 seedq > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
timeline prev lowdim-i8 1024 10 460; timeline seed lowdim-i8 1024 10 460
timeline prev lowdim-f16 1024 10 460; timeline seed lowdim-f16 1024 10 460
first() { # BUILD SET LISTS PROBES TAG
  local bld=$1 set=$2 lists=$3 probes=$4 tag=$5 d=/tmp/bench-data
  [ $((540 - SECONDS)) -lt 20 ] && { echo "no first: $tag" >> $W/times.txt; return; }
  export BENCH_BUNDLE=$b/ivf-$bld.ltkb LTOKIT_EXE=$b/ltokit-$bld
  local cache=/tmp/first-$set-$tag
  cold_cache $cache
  LTOKIT_LOG=ltokit=debug,ltokit_ivf=debug timeout 60 $LTOKIT_EXE ivf bench --k 10 --json --reps 1 \
    --cache-dir $cache --lists $lists --base $d/$set/base.npy --queries $d/$set/queries.npy \
    --probes $probes --batch 10000 --scan auto > $W/first-$set-$tag.json 2> $W/first-$set-$tag.err
  unset CUDA_CACHE_PATH BENCH_BUNDLE LTOKIT_EXE
  python3 -c "import json; j=json.load(open('$W/first-$set-$tag.json')); print('first $set $tag', round(j['first_search_ms'],1), 'ms')" >> $W/times.txt
}
first prev wide-f16 512 10 prev1; first lt4 wide-f16 512 10 lt4a; first lt8 wide-f16 512 10 lt8a
first prev wide-f16 512 10 prev2; first lt4 wide-f16 512 10 lt4b; first lt8 wide-f16 512 10 lt8b
first lt4 wide-i8 512 10 lt4c; first lt8 wide-i8 512 10 lt8c
runner_finish
