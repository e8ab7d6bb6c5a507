#!/usr/bin/env bash
# Session 26: why the first search took 330–740 ms on the sets of 512–1,024 lists in
# session 25's cuVS call (prev and bias alike; the images' 256 lists 9–74 ms). One bench a
# build and set from a cold cache (scripts/cold-cache.sh) with debug logs — `fs` is main
# with the first search's start and end logged — its JSON (cache counters, the plans
# linked ahead) and log kept; then the same again with the cache warm. `q0` is fs without
# the engine's own background queue (docs/wip/no-engine-queue.patch): is it the contention?
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s26a
python3 scripts/make-bench-data.py /tmp/bench-data lowdim-i8 images > $W/data.log 2>&1
echo "data at $SECONDS s" >> $W/times.txt
source scripts/cold-cache.sh
for bs in fs:lowdim-i8:1024 q0:lowdim-i8:1024 fs:images:256 prev:lowdim-i8:1024; do
  IFS=: read -r b name lists <<< "$bs"
  export BENCH_BUNDLE=gpu-run/bin/ivf-$b.ltkb LTOKIT_EXE=gpu-run/bin/ltokit-$b
  cache=/tmp/fs-cache-$name-$b
  cold_cache "$cache"
  for run in cold warm; do
    LTOKIT_LOG=debug timeout 120 $LTOKIT_EXE ivf bench --base /tmp/bench-data/$name/base.npy \
      --queries /tmp/bench-data/$name/queries.npy --lists $lists --probes 10 --k 10 --batch 10000 \
      --scan auto --json --reps 1 --cache-dir "$cache" > $W/$b-$name-$run.json 2> $W/$b-$name-$run.err
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], 'ctx', round(d['context_s'],3), 'build', round(d['build_s'],3), 'first', round(d['first_search_ms'],1), 'ahead', {k: v for k, v in d['linked_ahead'].items() if v}, 'cache', {k: v for k, v in d['cache'].items() if v})" $W/$b-$name-$run.json >> $W/summary.txt 2>&1
    echo "$b $name $run at $SECONDS s" >> $W/times.txt
  done
  unset CUDA_CACHE_PATH
done
cp $W/summary.txt $W/times.txt $OUT/
for f in $W/fs-lowdim-i8-cold.err $W/q0-lowdim-i8-cold.err $W/fs-images-cold.err; do cp $f $OUT/; done
tar czf $OUT/s26a.tgz -C $W .
cat $OUT/summary.txt
for b in fs q0; do
  echo "== $b lowdim-i8 cold"
  grep -E "first search|linked" $W/$b-lowdim-i8-cold.err | sed -E 's/\x1b\[[0-9;]*m//g' | cut -c1-160 | head -45
done
