#!/usr/bin/env bash
# Session 43, call 1: A/B of cand (main), gsho, ts48, cis, krn, rbs and ph2 (cand with --phases always) on five sets, two rounds; ncu
# timelines of cand and ts48 on lowdim-i8 × 10 and of cand and cis on images × 2. A build's GPU tests
# go in their own call on the warm machine (tests.sh).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s43
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
bench_arg_build ph2 cand --phases always
SETS="lowdim-i8 images lowdim-f16 lowdim wide-i8" ROUNDS=${ROUNDS:-2} ab_against ${AB:-260} ${BUILDS:-cand gsho ts48 cis krn rbs ph2}
timeline ts48 lowdim-i8 1024 10 $((SECONDS + 30))
timeline cand lowdim-i8 1024 10 $((SECONDS + 30))
timeline cis images 256 2 $((SECONDS + 30))
timeline cand images 256 2 $((SECONDS + 30))
cat "$W/gpu.txt"
runner_finish
