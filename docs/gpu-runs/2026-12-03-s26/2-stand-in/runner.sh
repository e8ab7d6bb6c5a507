#!/usr/bin/env bash
# Session 26, call 2: the coarse selection's stand-in (`si`: branch wip-select-standin,
# the register-row selection — a second to link — replaced by the other form until it is
# loaded). First searches from a cold cache (scripts/cold-cache.sh) with debug logs on the
# sets whose first search waited for it (lowdim-i8 × 10, lowdim × 5), cold then warm, and
# then the IVF GPU tests that cover the coarse search, its replay and the links ahead.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s26b
python3 scripts/make-bench-data.py /tmp/bench-data lowdim-i8 lowdim > $W/data.log 2>&1
echo "data at $SECONDS s" >> $W/times.txt
source scripts/cold-cache.sh
for bs in si:lowdim-i8:1024:10 si:lowdim:1024:5; do
  IFS=: read -r b name lists probes <<< "$bs"
  export BENCH_BUNDLE=gpu-run/bin/ivf-$b.ltkb LTOKIT_EXE=gpu-run/bin/ltokit-$b
  cache=/tmp/fs-cache-$name-$b
  cold_cache "$cache"
  for run in cold warm; do
    LTOKIT_LOG=debug timeout 100 $LTOKIT_EXE ivf bench --base /tmp/bench-data/$name/base.npy \
      --queries /tmp/bench-data/$name/queries.npy --lists $lists --probes $probes --k 10 --batch 10000 \
      --scan auto --json --reps 1 --cache-dir "$cache" > $W/$b-$name-$run.json 2> $W/$b-$name-$run.err
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['results'][-1]; print(sys.argv[1].split('/')[-1], 'ctx', round(d['context_s'],3), 'build', round(d['build_s'],3), 'first', round(d['first_search_ms'],1), 'recall', r['recall'], 'device_qps', round(r['device_qps']), 'links ahead', d['linked_ahead'].get('links'), 'engine links', d['cache'].get('links'))" $W/$b-$name-$run.json >> $W/summary.txt 2>&1
    echo "$b $name $run at $SECONDS s" >> $W/times.txt
  done
  unset CUDA_CACHE_PATH
done
t=gpu-run/bin/test-ivf-si
(SINCE=$SECONDS bash scripts/gpu-tests.sh $t $W/t1 240 large_batches repeated_device an_index_built \
  kernels_linked_ahead) &
(SINCE=$SECONDS bash scripts/gpu-tests.sh $t $W/t2 240 device_resident small_batches_split auto_takes \
  probing_every_list) &
wait
for s in t1 t2; do cat $W/$s/tests.txt >> $W/tests.txt; cat $W/$s/times.txt >> $W/times.txt; done
cp $W/summary.txt $W/times.txt $W/tests.txt $W/si-lowdim-i8-cold.err $OUT/
tar czf $OUT/s26b.tgz -C $W .
cat $OUT/summary.txt $W/times.txt
grep -E "first search|linked" $W/si-lowdim-i8-cold.err | sed -E 's/\x1b\[[0-9;]*m//g' | cut -c1-140 | head -20
grep -E "test result|checked|panicked|FAILED" $W/tests.txt | head -20
