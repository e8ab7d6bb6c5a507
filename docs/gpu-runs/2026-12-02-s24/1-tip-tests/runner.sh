#!/usr/bin/env bash
# Session 24, call 1: the GPU tests of main `fd4be16` (the landed combination: the seed by
# difference with one warp a query from 5,000 queries, the per-query i8 L2 by products),
# which never ran as landed — the IVF GPU test binary's tests in three parallel streams
# (each test one process; they share only the test kernel cache) — and beside them full
# ncu profiles of the lowdim-f16 × 10 and lowdim-i8 × 10 list-major scans (the third
# lmscan launch: warm caches), for where their instructions go.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s24a
t=gpu-run/bin/test-ivf-prev
(SINCE=$SECONDS bash scripts/gpu-tests.sh $t $W/t1 570 every_variant_matches) &
(SINCE=$SECONDS bash scripts/gpu-tests.sh $t $W/t2 570 list_major_bounds_seeded small_batches_cut \
  device_resident list_major_lists_longer probing_every_list) &
(SINCE=$SECONDS bash scripts/gpu-tests.sh $t $W/t3 570 list_major_tiles large_batches repeated_device \
  auto_takes a_plan_loaded a_non_finite small_batches_split an_index_built kernels_linked_ahead) &
python3 scripts/make-bench-data.py /tmp/bench-data lowdim-f16 lowdim-i8 > $W/data.txt 2>&1
echo "data at $SECONDS s" >> $W/times.txt
full_profile f16-scan prev 2 lowdim-f16 1024 10 450
full_profile i8-scan prev 2 lowdim-i8 1024 10 500
python3 gpu-run/sass-regions.py $W/full-f16-scan-sass.csv > $W/f16-regions.txt 2>&1
python3 gpu-run/sass-regions.py $W/full-i8-scan-sass.csv > $W/i8-regions.txt 2>&1
wait
for s in t1 t2 t3; do cat $W/$s/tests.txt >> $W/tests.txt; cat $W/$s/times.txt >> $W/times.txt; done
cp $W/f16-regions.txt $W/i8-regions.txt $OUT/ 2>/dev/null
gzip -c $W/full-f16-scan-sass.csv > $OUT/f16-sass.csv.gz; gzip -c $W/full-i8-scan-sass.csv > $OUT/i8-sass.csv.gz
runner_finish
