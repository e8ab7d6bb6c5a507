#!/usr/bin/env bash
# Session 45's A/B call: BUILDS (the first is the base) on SETS, ROUNDS rounds for at most
# AB seconds, then the GPU tests of TESTS_OF (a build with gpu-run/bin/test-ivf-NAME; none
# if empty) until LIMIT seconds. Carry gpu-run (dev's bins.tar.xz: main, kbr, kr16 and
# their test binaries, built by
#   TESTS=1 bash scripts/gpu-build-variants.sh main= kbr=docs/wip/keep-block-rounds.patch kr16=docs/wip/keep-rounds-f16.patch).
#   BUILDS="main kbr kr16" SETS="lowdim-f16 lowdim" ROUNDS=2 AB=150 TESTS_OF=kr16 LIMIT=420 bash docs/gpu-runs/2026-12-07-s45/ab.sh
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s45a
L=${LIMIT:-420}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
SETS=${SETS:-"lowdim-f16 lowdim"} ROUNDS=${ROUNDS:-2} ab_against "${AB:-150}" ${BUILDS:?BUILDS}
if [ -n "${TESTS_OF:-}" ]; then
  tests_of "$TESTS_OF" 100 "$L" \
    ${TEST_NAMES:-list_major_tiles every_variant list_major_bounds_seeded repeated_device_searches pairs_counted_in_the_coarse_selection}
fi
cat "$W/gpu.txt"
runner_finish
