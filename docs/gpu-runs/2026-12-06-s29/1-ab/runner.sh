#!/usr/bin/env bash
# The planned call 1 of sessions 28 and 29 (neither had device time; about 560 s, gpu-run
# carried, built by docs/gpu-runs/2026-12-06-s29/build.sh). A/B of main's tip (`prev`)
# against, each alone:
#   late   docs/wip/late-rest.patch: the 8-bit register tiles copy the part of a step past
#          the registers' 32 KiB with cp.async after the multiply's barrier, beside the
#          top-k pass, instead of loading it in the store (the images' 784-byte rows);
#   ints   docs/wip/int-ids.patch: ws_offer_many's warp sort moves 32-bit row ids (two
#          shuffles an exchange instead of three);
#   both   late + ints;
#   short  docs/wip/select-short.patch: the coarse selection of rows of up to 256 centres
#          held in eight registers a lane (no second read of the row);
#   pairs  docs/wip/ldsm-pairs.patch: the mma tiles load the queries' B operands of two
#          8-query blocks with one ldmatrix.x4 (half the B loads of 32- and 64-query tiles);
# six sets, three rounds, batches 10,000 and 1,000. Then the images and lowdim-i8 (two
# rounds) against docs/wip/phase-qt-knob.patch swept by environment: `k16` / `k32` (the
# first phase's tiles — or the only phase's — at most 16 / 32 queries), `alw` (two phases
# at every probe count), `k16a` (both). Then, while time is left, ncu timelines and full
# profiles of the coarse search's two kernels on images × 2.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s29a
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$W/gpu.txt" 2>&1
env_build k16 knob LTOKIT_WIP_PHASE_QT=16
env_build k32 knob LTOKIT_WIP_PHASE_QT=32
env_build alw knob LTOKIT_WIP_PHASES=always
env_build k16a knob LTOKIT_WIP_PHASES=always LTOKIT_WIP_PHASE_QT=16
SETS="images lowdim-i8 lowdim-f16 lowdim wide-f16 wide-i8" ROUNDS=3 timeout 330 \
  bash scripts/gpu-ab.sh "$W/ab" prev late ints both short pairs > "$OUT/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
SETS="images lowdim-i8" ROUNDS=2 timeout $((470 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/img" prev knob k16 k32 alw k16a > "$OUT/img.log" 2>&1
echo "img at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/img" prev > "$W/img-summary.txt" 2>&1
timeline prev images 256 10 540; timeline pairs images 256 10 540
timeline prev lowdim-i8 1024 10 540; timeline pairs lowdim-i8 1024 10 540
timeline prev images 256 2 540; timeline short images 256 2 540
for kern in coarse_scores coarse_select; do
  [ "$SECONDS" -lt 530 ] || { echo "no profile: $kern" >> "$W/times.txt"; continue; }
  # shellcheck disable=SC2046 # bench_args is a word list
  timeout 60 ncu --set full --import-source no -k regex:ivf_$kern --launch-skip 1 --launch-count 1 \
    -o "$W/full-$kern" gpu-run/bin/ltokit-prev $(bench_args prev images 256 2) > "$W/full-$kern.log" 2>&1
  { echo "== $kern images x 2"; ncu -i "$W/full-$kern.ncu-rep" --page details 2>&1 | grep -vE "^ *-+ *$"; } >> "$OUT/coarse-profiles.txt"
done
echo "coarse profiles at $SECONDS s" >> "$W/times.txt"
cp "$W/summary.txt" "$OUT/ab-summary.txt"; cp "$W/img-summary.txt" "$OUT/img-summary.txt"
runner_finish
cat "$W/img-summary.txt" "$W/gpu.txt"
