#!/usr/bin/env bash
# Session 19, call 2: A/B of main (prev) against `lean` (the list-major scan's row copy by
# whole rounds, and the work area's offset a kernel argument), `phase` (lean + the batch
# scanned in two phases, each query's first probe alone, then the rest) and `phns` (phase
# without the seed); six sets, three rounds; ncu durations; a full ncu profile of phase's
# second-phase scan of lowdim-i8 (the warm-up search's two scans and this one's first
# skipped); phase's GPU tests. (As run, these commands were written out here; they are now the
# helpers of scripts/gpu-runner-lib.sh.)
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/ab2
SETS="lowdim-i8 images lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $W prev lean phase phns > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
timeline phase lowdim-i8 1024 10 300; timeline lean lowdim-i8 1024 10 300; timeline phase images 256 10 300
timeline phns images 256 2 300; timeline phase lowdim-f16 1024 10 300
full_profile i8-scan phase 3 lowdim-i8 1024 10 330
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-phase $W 588 list_major_tiles device_resident list_major_bounds_seeded list_major_lists_longer small_batches_cut probing_every_list every_variant_matches
runner_finish
