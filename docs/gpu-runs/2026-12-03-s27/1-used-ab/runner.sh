#!/usr/bin/env bash
# Session 27, call 1: the A/B of main `bbd093a` (prev) against docs/wip/used-blocks.patch
# (`used`: the mma tiles multiply only the query blocks of 8 slots that hold a pair — a
# list's last tile is partial — with the blocks alternating between the two warp halves),
# six sets, three rounds; ncu kernel timelines of images × 10 and lowdim-i8 × 10 for both;
# full ncu profiles (details, SASS counters, raw stall metrics) of used's images × 10
# scans (phase 1 and phase 2) and lowdim-i8 × 10's scan; then the IVF GPU tests of used
# (which is main's tip f228f11 plus the patch: the tip's refactor had not run on the GPU).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s27a
SETS="images lowdim-i8 lowdim-f16 lowdim wide-f16 wide-i8" ROUNDS=3 \
  bash scripts/gpu-ab.sh $W prev used > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
timeline prev images 256 10 330; timeline used images 256 10 330
timeline prev lowdim-i8 1024 10 330; timeline used lowdim-i8 1024 10 330
raw_stalls() {
  ncu -i "$W/full-$1.ncu-rep" --page raw --csv 2>/dev/null | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin)); h, u, v = rows[0], rows[1], rows[2]
for i, n in enumerate(h):
    if ("issue_stalled" in n and (n.endswith("per_issue_active.ratio") or n.startswith("smsp__pcsamp"))) or n in ("smsp__inst_executed.sum", "sm__cycles_elapsed.avg", "gpu__time_duration.sum"):
        print(n, v[i])' > "$W/full-$1-stalls.txt" 2>&1
}
full_profile img10p1 used 2 images 256 10 420; python3 gpu-run/sass-regions.py $W/full-img10p1-sass.csv > $W/regions-img10p1.txt 2>&1; raw_stalls img10p1
full_profile img10p2 used 3 images 256 10 450; python3 gpu-run/sass-regions.py $W/full-img10p2-sass.csv > $W/regions-img10p2.txt 2>&1; raw_stalls img10p2
full_profile i8x10 used 1 lowdim-i8 1024 10 480; python3 gpu-run/sass-regions.py $W/full-i8x10-sass.csv > $W/regions-i8x10.txt 2>&1; raw_stalls i8x10
echo "profiles at $SECONDS s" >> $W/times.txt
t=gpu-run/bin/test-ivf-used
(SINCE=$SECONDS bash scripts/gpu-tests.sh $t $W/t1 585 every_variant_matches list_major_tiles) &
(SINCE=$SECONDS bash scripts/gpu-tests.sh $t $W/t2 585 list_major_bounds_seeded small_batches_cut \
  device_resident list_major_lists_longer probing_every_list an_index_built eight_bit_distances) &
(SINCE=$SECONDS bash scripts/gpu-tests.sh $t $W/t3 585 large_batches repeated_device \
  auto_takes a_plan_loaded a_non_finite small_batches_split kernels_linked_ahead) &
wait
for s in t1 t2 t3; do cat $W/$s/tests.txt >> $W/tests.txt; cat $W/$s/times.txt >> $W/times.txt; done
for p in img10p1 img10p2 i8x10; do
  { echo "== $p"; cat $W/regions-$p.txt; grep -E "Duration|Registers|Waves|Achieved Occupancy" $W/full-$p-details.txt; cat $W/full-$p-stalls.txt; } >> $OUT/profiles.txt 2>&1
done
cp $W/summary.txt $OUT/ 2>/dev/null
runner_finish
