#!/usr/bin/env bash
# Session 26: why the first search took 330–740 ms on the sets of 512–1,024 lists in
# session 25's cuVS call (prev and bias alike; the images' 256 lists 9–74 ms). One bench a
# build and set from a cold cache (scripts/cold-cache.sh) with debug logs, its JSON (cache
# counters, the plans linked ahead) and log kept; then the same again with the cache warm.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s26a
python3 scripts/make-bench-data.py /tmp/bench-data lowdim-i8 images > $W/data.log 2>&1
source scripts/cold-cache.sh
for b in prev bias; do
  for s in lowdim-i8:1024 images:256; do
    IFS=: read -r name lists <<< "$s"
    export BENCH_BUNDLE=gpu-run/bin/ivf-$b.ltkb LTOKIT_EXE=gpu-run/bin/ltokit-$b
    cache=/tmp/fs-cache-$name-$b
    cold_cache "$cache"
    for run in cold warm; do
      LTOKIT_LOG=debug timeout 120 $LTOKIT_EXE ivf bench --base /tmp/bench-data/$name/base.npy \
        --queries /tmp/bench-data/$name/queries.npy --lists $lists --probes 10 --k 10 --batch 10000 \
        --scan auto --json --reps 1 --cache-dir "$cache" > $W/$b-$name-$run.json 2> $W/$b-$name-$run.err
      python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1], 'first', d['first_search_ms'], 'build', d.get('build_s'), 'ahead', d.get('linked_ahead'), 'cache', d.get('cache'))" $W/$b-$name-$run.json >> $W/summary.txt 2>&1
    done
    unset CUDA_CACHE_PATH
  done
done
cp $W/summary.txt $OUT/
tar czf $OUT/s26a.tgz -C $W .
cat $OUT/summary.txt
