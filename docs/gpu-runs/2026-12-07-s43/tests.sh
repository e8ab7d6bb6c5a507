#!/usr/bin/env bash
# GPU tests of BUILD (gpu-run/bin/test-ivf-BUILD) after warming its kernel cache, on the warm
# machine after the A/B (session 43's next.sh); TEST_NAMES picks the tests, LIMIT (default 400) bounds the call, TESTS_W the work folder.
set -u
. scripts/gpu-runner-lib.sh
runner_start "${TESTS_W:-/tmp/s43b}"
L=${LIMIT:-400}
b=${BUILD:?BUILD}
nvidia-smi --query-gpu=name --format=csv,noheader > "$W/gpu.txt"
tests_of "$b" 100 "$L" ${TEST_NAMES:-list_major_tiles list_major_bounds_seeded an_index_built_on_the_device device_resident}
cat "$W/gpu.txt"
runner_finish
