#!/usr/bin/env bash
# Session 49's test call (carry gpu-run/bins.tar.xz): TESTS_OF's kernel cache warmed for at
# most WARM s, then its GPU tests TEST_NAMES one at a time until LIMIT s, e.g.
#   TESTS_OF=qs WARM=60 TEST_NAMES="list_major_tiles list_major_lists_longer" LIMIT=250 bash docs/gpu-runs/2026-12-07-s49/tests.sh
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s49t
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
# shellcheck disable=SC2086 # TEST_NAMES is a word list
tests_of "${TESTS_OF:?TESTS_OF}" "${WARM:-60}" "${LIMIT:-250}" ${TEST_NAMES:?TEST_NAMES}
cat "$W/gpu.txt"
runner_finish
