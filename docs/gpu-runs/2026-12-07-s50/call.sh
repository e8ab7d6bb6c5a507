#!/usr/bin/env bash
# Session 50's device call (carry gpu-run/bins.tar.xz, built by
# `TESTS=1 bash scripts/gpu-build-variants.sh main= …`): an A/B of BUILDS on SETS (ROUNDS
# rounds, at most AB seconds; none with AB=0), then the GPU tests TEST_NAMES of TESTS_OF
# (its kernel cache warmed for at most WARM seconds first), all within LIMIT seconds; with
# TIMELINES (probe counts), ncu timelines of images for TL_BUILDS (default BUILDS). E.g.
#   BUILDS="main ks" SETS="images wide-i8" ROUNDS=3 AB=200 TESTS_OF=ks WARM=100 \
#     TEST_NAMES="list_major_tiles eight_bit_distances" LIMIT=560 bash docs/gpu-runs/2026-12-07-s50/call.sh
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s50
L=${LIMIT:-400}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
# shellcheck disable=SC2086 # BUILDS is a word list
[ "${AB:-0}" -gt 0 ] && SETS=${SETS:-"images wide-i8"} ROUNDS=${ROUNDS:-2} ab_against "$AB" ${BUILDS:?BUILDS}
if [ -n "${TIMELINES:-}" ]; then
  python3 scripts/make-bench-data.py /tmp/bench-data images > /dev/null 2>&1
  for b in ${TL_BUILDS:-$BUILDS}; do
    for p in $TIMELINES; do timeline "$b" images 256 "$p" $((L - 20)); done
  done
fi
if [ -n "${TESTS_OF:-}" ]; then
  # shellcheck disable=SC2086 # TEST_NAMES is a word list
  tests_of "$TESTS_OF" "${WARM:-100}" "$L" ${TEST_NAMES:?TEST_NAMES}
fi
cat "$W/gpu.txt"
runner_finish
