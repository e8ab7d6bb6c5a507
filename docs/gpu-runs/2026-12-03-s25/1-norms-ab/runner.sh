#!/usr/bin/env bash
# Session 25, call 1: the A/B of main `fd4be16` (prev) against docs/wip/norms.patch (the
# rows' squared norms computed once where the lists reach the device, kernels/row_norms.cu,
# and loaded with each list-major step instead of summed from the rows in every tile) and
# norms + f16-ask-first.patch (`normsask`: the f16 wide-room tile also asks whether any
# accumulator is kept before forming the bits — with the norms, f16 × 256 takes the wide
# room too) and normsask + f16-bias.patch (`bias`: the f16 and f32 mma tiles under L2
# test xn − 2 dot against a loosened per-slot bound t − qn instead of scoring every
# accumulator), six sets, three rounds; ncu kernel timelines of images × 10 and lowdim-f16
# × 10 for prev and norms; then the IVF GPU tests of `bias` (all three changes) in three
# parallel streams, and beside them a full ncu profile of norms's images × 10 scan (its
# counters; the tests share the GPU, so not its time).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s25a
SETS="lowdim-f16 lowdim-i8 images lowdim wide-f16 wide-i8" ROUNDS=3 \
  bash scripts/gpu-ab.sh $W prev norms normsask bias > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
timeline prev images 256 10 280; timeline norms images 256 10 280
timeline prev lowdim-f16 1024 10 280; timeline bias lowdim-f16 1024 10 280
echo "tests at $SECONDS s" >> $W/times.txt
t=gpu-run/bin/test-ivf-bias
(SINCE=$SECONDS bash scripts/gpu-tests.sh $t $W/t1 575 every_variant_matches) &
(SINCE=$SECONDS bash scripts/gpu-tests.sh $t $W/t2 575 list_major_bounds_seeded small_batches_cut \
  device_resident list_major_lists_longer probing_every_list an_index_built eight_bit_distances) &
(SINCE=$SECONDS bash scripts/gpu-tests.sh $t $W/t3 575 list_major_tiles large_batches repeated_device \
  auto_takes a_plan_loaded a_non_finite small_batches_split kernels_linked_ahead) &
(full_profile img-scan norms 2 images 256 10 560
 python3 gpu-run/sass-regions.py $W/full-img-scan-sass.csv > $W/img-regions.txt 2>&1
 cp $W/img-regions.txt $OUT/ 2>/dev/null) &
wait
for s in t1 t2 t3; do cat $W/$s/tests.txt >> $W/tests.txt; cat $W/$s/times.txt >> $W/times.txt; done
cp $W/summary.txt $OUT/ 2>/dev/null
runner_finish
