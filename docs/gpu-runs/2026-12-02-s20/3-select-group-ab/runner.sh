#!/usr/bin/env bash
# Session 20, call 10: A/B of main (prev: the first tiles landed) against `ns` (no seed:
# do the first tiles make it redundant?), `csr` (the coarse selection holding rows of
# 257–1,024 centres in registers), `gsh` (the grouping's count and fill in shared memory
# where n_lists ≤ 1,024), `cg` (csr + gsh) and `la` (the register tiles' old row store and
# in-kernel work offset, again); six sets, three rounds; ncu durations; a
# full ncu profile of the images' f16 score matrix (prev, × 2); cg's GPU tests.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s20c
SETS="lowdim-i8 images lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $W prev ns csr gsh cg la > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
timeline cg lowdim-i8 1024 10 330; timeline cg wide-i8 512 10 330; timeline cg images 256 10 330
timeline ns lowdim-i8 1024 10 330; timeline prev images 256 2 330
f=$W/full-coarse-h16
# shellcheck disable=SC2046
timeout 40 ncu --set full --import-source no -k regex:coarse_scores_h16 --launch-skip 2 --launch-count 1 -o $f \
  gpu-run/bin/ltokit-prev $(bench_args prev images 256 2) > $f.log 2>&1
ncu -i $f.ncu-rep --page details > $f-details.txt 2>&1
ncu -i $f.ncu-rep --page source --csv --print-source sass > $f-sass.csv 2>&1
echo "coarse profile at $SECONDS s" >> $W/times.txt
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-cg $W 585 large_batches list_major_tiles
runner_finish
