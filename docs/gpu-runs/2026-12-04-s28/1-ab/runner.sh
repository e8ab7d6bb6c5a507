#!/usr/bin/env bash
# Session 28, call 1 (about 520 s): A/B of main (prev: `c6dcfa9` when written) against docs/wip/late-rest.patch
# (`late`: the 8-bit register tiles copy the part of a step past the registers' 32 KiB
# with cp.async after the multiply's barrier, beside the top-k pass, instead of loading it
# in the store), docs/wip/int-ids.patch (`ints`: the warp sort of ws_offer_many moves
# 32-bit row ids, two shuffles an exchange instead of three), both, and
# docs/wip/select-short.patch (`short`: the coarse selection of rows of up to 256 centres
# held in eight registers a lane, no second read); six sets, three rounds. Then the images and lowdim-i8 (two rounds) against docs/wip/phase-qt-knob.patch swept by
# environment: `k16` / `k32` (the first phase's tiles — or the only phase's — at most 16 /
# 32 queries), `alw` (two phases at every probe count), `k16a` (both). ncu timelines of
# images × 10 (prev, late, both, k16), images × 2 (prev, short) and lowdim-i8 × 10 (prev,
# ints); full ncu profiles
# of the coarse search's score matrix and selection on images × 2 (coarse-profiles.txt).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s28a
env_build k16 knob LTOKIT_WIP_PHASE_QT=16
env_build k32 knob LTOKIT_WIP_PHASE_QT=32
env_build alw knob LTOKIT_WIP_PHASES=always
env_build k16a knob LTOKIT_WIP_PHASES=always LTOKIT_WIP_PHASE_QT=16
SETS="images lowdim-i8 lowdim-f16 lowdim wide-f16 wide-i8" ROUNDS=3 \
  bash scripts/gpu-ab.sh $W/ab prev late ints both short > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
SETS="images lowdim-i8" ROUNDS=2 bash scripts/gpu-ab.sh $W/img prev knob k16 k32 alw k16a > $OUT/img.log 2>&1
echo "img at $SECONDS s" >> $W/times.txt
timeline prev images 256 10 560; timeline late images 256 10 560; timeline both images 256 10 560
timeline k16 images 256 10 560
timeline prev images 256 2 560; timeline short images 256 2 560
timeline prev lowdim-i8 1024 10 560; timeline ints lowdim-i8 1024 10 560
# Full ncu profiles of the coarse search's two kernels on images × 2 (the second search:
# the timed one after the warm-up), their details into OUT.
for kern in coarse_scores coarse_select; do
  [ "$SECONDS" -lt 530 ] || { echo "no profile: $kern" >> $W/times.txt; continue; }
  # shellcheck disable=SC2046
  timeout 60 ncu --set full --import-source no -k regex:ivf_$kern --launch-skip 1 --launch-count 1 \
    -o $W/full-$kern gpu-run/bin/ltokit-prev $(bench_args prev images 256 2) > $W/full-$kern.log 2>&1
  { echo "== $kern images x 2"; ncu -i $W/full-$kern.ncu-rep --page details 2>&1 | grep -vE "^ *-+ *$"; } >> $OUT/coarse-profiles.txt
done
echo "coarse profiles at $SECONDS s" >> $W/times.txt
cp $W/ab/summary.txt $OUT/ab-summary.txt 2>/dev/null
cp $W/img/summary.txt $OUT/img-summary.txt 2>/dev/null
runner_finish
sed -n "/means of the rounds/,\$p" $W/ab/summary.txt $W/img/summary.txt
