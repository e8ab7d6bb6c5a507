#!/usr/bin/env bash
# Session 48's device call: cuVS beside BUILDS on the five bench sets at batch 10,000
# (unless CUVS=0), then an A/B of BUILDS on SETS (ROUNDS rounds, at most AB seconds; none
# with AB=0), then the ncu timelines of images × 2 for each build, then the GPU tests of
# TESTS_OF, all within LIMIT seconds. The cuVS wheel chunks must be in /root/cuvs (the
# chunk calls of scripts/fetch-cuvs.sh); carry gpu-run (dev's bins.tar.xz: main and the
# candidates, built by `TESTS=1 bash scripts/gpu-build-variants.sh main= c128=…`). E.g.
#   BUILDS="main c128" SETS="images lowdim-i8 wide-i8" ROUNDS=2 AB=120 LIMIT=420 bash docs/gpu-runs/2026-12-07-s48/call.sh
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s48a
L=${LIMIT:-400}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
# shellcheck disable=SC2086 # BUILDS is a word list
[ "${CUVS:-1}" = 1 ] && cuvs_beside $((SECONDS + ${CUVS_S:-200})) ${BUILDS:?BUILDS}
# shellcheck disable=SC2086
[ "${AB:-0}" -gt 0 ] && SETS=${SETS:-"images lowdim-i8"} ROUNDS=${ROUNDS:-2} ab_against "$AB" $BUILDS
if [ -n "${TIMELINES:-}" ]; then
  python3 scripts/make-bench-data.py /tmp/bench-data images > /dev/null 2>&1
  for b in $BUILDS; do timeline "$b" images 256 2 $((L - 20)); done
  for b in $BUILDS; do timeline "$b" lowdim-i8 1024 10 $((L - 20)); done
fi
if [ -n "${TESTS_OF:-}" ]; then
  tests_of "$TESTS_OF" 100 "$L" \
    ${TEST_NAMES:-large_batches every_variant eight_bit_distances small_batches_split device_resident probing_every_list pairs_counted}
fi
cat "$W/gpu.txt"
runner_finish
